// untilReady: the one watch both the local cluster's processes and the
// nemesis's host processes wait on. It must resolve only on a ready line and
// fail, naming the last lines, on an early exit, a timeout or a bad ready line.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { untilReady } from '../../../src/cluster/managed-process.ts';

function child(script: string) {
  return spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'pipe', 'pipe'] });
}

describe('untilReady', () => {
  it('resolves on the first ready line, on stdout or stderr, passing every line on', async () => {
    const proc = child('console.log("starting"); console.error("ready now"); setTimeout(() => {}, 10_000)');
    const lines: string[] = [];
    await untilReady(proc, {
      name: 'p',
      readyTimeoutMs: 10_000,
      isReady: (line) => line.startsWith('ready'),
      onLine: (line) => lines.push(line),
    });
    expect(lines).toContain('ready now');
    proc.kill('SIGKILL');
  });

  it('rejects when the process exits before it is ready, naming its last lines', async () => {
    const proc = child('console.log("one"); console.log("two"); process.exit(3)');
    await expect(untilReady(proc, { name: 'p', readyTimeoutMs: 10_000, isReady: () => false })).rejects.toThrow(
      /p exited \(3\) before it was ready: .*two/,
    );
  });

  it('rejects after the timeout and runs onTimeout, which may kill it', async () => {
    const proc = child('console.log("waiting"); setTimeout(() => {}, 10_000)');
    const exited = new Promise((resolve) => proc.once('exit', (_code, signal) => resolve(signal)));
    await expect(
      untilReady(proc, { name: 'p', readyTimeoutMs: 300, isReady: () => false, onTimeout: () => proc.kill('SIGKILL') }),
    ).rejects.toThrow(/p was not ready within 300 ms/);
    expect(await exited).toBe('SIGKILL');
  });

  it('rejects with the error of a ready line it cannot read', async () => {
    const proc = child('console.log("ready but broken"); setTimeout(() => {}, 10_000)');
    const isReady = (line: string): boolean => {
      if (line.startsWith('ready')) throw new Error('the ready line does not report the ports bound');
      return false;
    };
    await expect(untilReady(proc, { name: 'p', readyTimeoutMs: 10_000, isReady })).rejects.toThrow('does not report the ports');
    proc.kill('SIGKILL');
  });
});
