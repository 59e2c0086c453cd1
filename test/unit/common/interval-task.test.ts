// Unit tests for IntervalTask, the one background loop: runs every interval
// (not before), never two runs at once (a tick during a run is skipped, not
// queued), errors logged and the loop goes on, unref'd, stop ends it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { spawnSync } from 'node:child_process';
import { IntervalTask } from '../../../src/common/index.ts';

function recordingLogger() {
  const errors: { msg: string; fields?: Record<string, unknown> }[] = [];
  const ignore = () => undefined;
  return {
    errors,
    logger: {
      debug: ignore,
      info: ignore,
      warn: ignore,
      error: (msg: string, fields?: Record<string, unknown>) => errors.push({ msg, fields }),
    },
  };
}

describe('interval task', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs once per interval from start, never before the first interval, and not after stop', async () => {
    const { logger } = recordingLogger();
    let runs = 0;
    const task = new IntervalTask({ name: 'count', intervalMs: 1_000, logger }, () => void runs++);
    task.start();
    await vi.advanceTimersByTimeAsync(999);
    expect(runs).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs).toBe(1);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(runs).toBe(4);
    task.stop();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(runs).toBe(4);
  });

  it('a tick while a run is under way is skipped, not queued, and runNow returns at once', async () => {
    const { logger } = recordingLogger();
    let starts = 0;
    let finish: () => void = () => undefined;
    const task = new IntervalTask({ name: 'slow', intervalMs: 100, logger }, () => {
      starts++;
      return new Promise<void>((resolve) => (finish = resolve));
    });
    task.start();
    await vi.advanceTimersByTimeAsync(100);
    expect(starts).toBe(1);
    // Five ticks and a direct call while the first run waits: none start a run.
    await vi.advanceTimersByTimeAsync(500);
    let returned = false;
    void task.runNow().then(() => (returned = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(returned).toBe(true);
    expect(starts).toBe(1);
    finish();
    await vi.advanceTimersByTimeAsync(0);
    // The next tick after the run ends starts one; the skipped ones are not made up.
    await vi.advanceTimersByTimeAsync(100);
    expect(starts).toBe(2);
    task.stop();
  });

  it('a run that throws or rejects is logged with the task name and the loop goes on', async () => {
    const { logger, errors } = recordingLogger();
    let runs = 0;
    const task = new IntervalTask({ name: 'checkpoint', intervalMs: 100, logger }, async () => {
      runs++;
      if (runs === 1) throw new Error('disk full');
      if (runs === 2) return Promise.reject(new Error('busy'));
    });
    task.start();
    await vi.advanceTimersByTimeAsync(300);
    expect(runs).toBe(3);
    expect(errors).toEqual([
      { msg: 'checkpoint failed', fields: { error: 'disk full' } },
      { msg: 'checkpoint failed', fields: { error: 'busy' } },
    ]);
    await expect(task.runNow()).resolves.toBeUndefined();
    task.stop();
  });

  it('a synchronous throw is logged the same way, and runNow never rejects', async () => {
    const { logger, errors } = recordingLogger();
    const task = new IntervalTask({ name: 'tick', intervalMs: 100, logger }, () => {
      throw new Error('bad state');
    });
    await expect(task.runNow()).resolves.toBeUndefined();
    expect(errors).toEqual([{ msg: 'tick failed', fields: { error: 'bad state' } }]);
  });

  it("its timer is unref'd, so it never keeps a process alive", () => {
    vi.useRealTimers();
    const setIntervalSpy = vi.spyOn(globalThis, 'setInterval');
    const task = new IntervalTask({ name: 'idle', intervalMs: 60_000, logger: recordingLogger().logger }, () => undefined);
    task.start();
    const timer = setIntervalSpy.mock.results[0]!.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    task.stop();
    setIntervalSpy.mockRestore();
  });

  it('start after stop resumes, and a second start does not double the runs', async () => {
    const { logger } = recordingLogger();
    let runs = 0;
    const task = new IntervalTask({ name: 'count', intervalMs: 1_000, logger }, () => void runs++);
    task.start();
    task.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(1);
    task.stop();
    task.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(2);
    task.stop();
  });
});

describe('interval task in a process', () => {
  it('a failed assertion in the task crashes the process (a programmer error is not logged and carried on)', () => {
    const taskModule = new URL('../../../src/common/interval-task.ts', import.meta.url).href;
    const script = `
      import assert from 'node:assert';
      const { IntervalTask } = await import(${JSON.stringify(taskModule)});
      const ignore = () => undefined;
      const logger = { debug: ignore, info: ignore, warn: ignore, error: ignore };
      const task = new IntervalTask({ name: 'broken', intervalMs: 10, logger }, () => assert.fail('invariant broken'));
      task.start();
      setTimeout(() => process.exit(0), 2_000);
    `;
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('invariant broken');
  });
});
