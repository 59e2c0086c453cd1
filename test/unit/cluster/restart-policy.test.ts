// Unit tests for the launcher's restarts: the backoff and the cap per window
// (injected clock), and the watch loop over a fake child (the real process
// classes are tested with real processes in the integration tests).
import { describe, expect, it } from 'vitest';
import { keepRestarting, RestartPolicy, type Restartable } from '../../../src/cluster/restart-policy.ts';

const options = { restartsPerWindowMax: 3, windowMs: 60_000, backoffMs: 1_000, backoffMaxMs: 3_000 };

describe('restart policy', () => {
  it('waits longer with each restart in the window, up to the max, then gives up', () => {
    const policy = new RestartPolicy(options);
    expect(policy.onExit(0)).toEqual({ restart: true, delayMs: 1_000 });
    expect(policy.onExit(5_000)).toEqual({ restart: true, delayMs: 2_000 });
    expect(policy.onExit(10_000)).toEqual({ restart: true, delayMs: 3_000 });
    expect(policy.onExit(15_000)).toEqual({ restart: false, restartsInWindow: 3 });
  });

  it('restarts older than the window stop counting, so a child that dies now and then is always restarted', () => {
    const policy = new RestartPolicy(options);
    for (let exit = 0; exit < 20; exit++) expect(policy.onExit(exit * 30_000).restart).toBe(true);
    // Exactly one window after the oldest counted restart, that one no longer counts.
    const tight = new RestartPolicy(options);
    tight.onExit(0);
    tight.onExit(1);
    tight.onExit(2);
    expect(tight.onExit(59_999).restart).toBe(false);
    expect(tight.onExit(60_000)).toEqual({ restart: true, delayMs: 3_000 });
  });
});

/** A child whose exits and starts the test drives. */
class FakeChild implements Restartable {
  readonly name = 'router-2';
  starts = 0;
  stops = 0;
  /** Start outcomes, in order; past the end a start succeeds. */
  startOutcomes: ('ready' | 'exits' | 'hangs')[] = [];
  private exit: ((code: number | null) => void) | undefined;
  private exitPromise: Promise<number | null> = this.newExit();
  private hung = false;

  private newExit(): Promise<number | null> {
    return new Promise((resolve) => (this.exit = resolve));
  }

  die(code: number | null): void {
    this.exit!(code);
  }

  exited(): Promise<number | null> {
    return this.exitPromise;
  }

  async start(): Promise<void> {
    this.starts++;
    const outcome = this.startOutcomes.shift() ?? 'ready';
    this.exitPromise = this.newExit();
    if (outcome === 'exits') {
      this.die(1);
      throw new Error('router-2 exited (1) before it was ready');
    }
    if (outcome === 'hangs') {
      this.hung = true;
      throw new Error('router-2 was not ready within 20000 ms');
    }
  }

  async stop(): Promise<void> {
    this.stops++;
    if (this.hung) {
      this.hung = false;
      this.die(null);
    }
  }
}

async function settle(): Promise<void> {
  for (let turn = 0; turn < 20; turn++) await Promise.resolve();
}

function harness(child: FakeChild) {
  let nowMs = 0;
  let stopping = false;
  const sleeps: number[] = [];
  const lines: string[] = [];
  const gaveUp: string[] = [];
  const done = keepRestarting(child, {
    policy: new RestartPolicy(options),
    nowMs: () => nowMs,
    sleep: async (ms) => {
      sleeps.push(ms);
      nowMs += ms;
    },
    stopping: () => stopping,
    log: (line) => lines.push(line),
    giveUp: (reason) => {
      gaveUp.push(reason);
      stopping = true;
    },
  });
  return {
    done,
    sleeps,
    lines,
    gaveUp,
    advance: (ms: number) => (nowMs += ms),
    stop: () => (stopping = true),
  };
}

describe('keep restarting', () => {
  it('a child killed by a signal is restarted after the backoff, and every exit and restart is one line', async () => {
    const child = new FakeChild();
    const run = harness(child);
    child.die(null);
    await settle();
    expect(child.starts).toBe(1);
    expect(run.sleeps).toEqual([1_000]);
    expect(run.lines).toEqual(['router-2 exited unexpectedly (killed by a signal); restarting it in 1000 ms', 'router-2 restarted']);
    run.advance(120_000);
    child.die(3);
    await settle();
    expect(child.starts).toBe(2);
    // Two minutes later: the first restart no longer counts.
    expect(run.sleeps).toEqual([1_000, 1_000]);
    expect(run.lines[2]).toBe('router-2 exited unexpectedly (code 3); restarting it in 1000 ms');
    run.stop();
    child.die(0);
    await run.done;
    expect(child.starts).toBe(2);
  });

  it('a child that cannot start is retried with growing waits, then given up on once, without spinning', async () => {
    const child = new FakeChild();
    child.startOutcomes = ['exits', 'exits', 'exits', 'exits'];
    const run = harness(child);
    child.die(1);
    await run.done;
    expect(child.starts).toBe(3);
    expect(run.sleeps).toEqual([1_000, 2_000, 3_000]);
    expect(run.lines.filter((line) => line.includes('failed to restart'))).toHaveLength(3);
    expect(run.gaveUp).toEqual(['router-2 exited (code 1) after 3 restarts within 60 s']);
  });

  it('a restart that never gets ready is stopped, and its exit counts like any other', async () => {
    const child = new FakeChild();
    child.startOutcomes = ['hangs'];
    const run = harness(child);
    child.die(1);
    await settle();
    expect(child.stops).toBe(1);
    // The hung child's exit (the stop) led to a second restart, which succeeded.
    expect(child.starts).toBe(2);
    expect(run.sleeps).toEqual([1_000, 2_000]);
    expect(run.lines).toContain('router-2 failed to restart: router-2 was not ready within 20000 ms');
    run.stop();
    child.die(0);
    await run.done;
  });

  it('exits while the launcher stops are expected and nothing restarts, even one in its backoff', async () => {
    const child = new FakeChild();
    const run = harness(child);
    run.stop();
    child.die(0);
    await run.done;
    expect(child.starts).toBe(0);
    expect(run.lines).toEqual([]);

    const backingOff = new FakeChild();
    let stopping = false;
    const done = keepRestarting(backingOff, {
      policy: new RestartPolicy(options),
      nowMs: () => 0,
      sleep: async () => {
        stopping = true;
      },
      stopping: () => stopping,
      log: () => {},
      giveUp: () => {},
    });
    backingOff.die(null);
    await done;
    expect(backingOff.starts).toBe(0);
  });
});
