// `tally bench` smoke run: a few seconds of real load, asserting the
// exact-read check and the shape of the summary — never a speed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tally } from '../helpers/cli.ts';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';

describe('tally bench', () => {
  let tc: TestCluster;
  beforeAll(async () => {
    tc = await startCluster({ pairs: 2 });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it('bench: a mixed batched run in two processes passes the exact-read check', async () => {
    const result = await tally([
      'bench',
      '--router',
      tc.cluster.routerAddress,
      '--workload',
      'mix',
      '--cold-counters',
      '50',
      '--batch',
      '20',
      '--concurrency',
      '4',
      '--procs',
      '2',
      '--seconds',
      '2',
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as {
      okIncrements: number;
      incrementsPerSec: number;
      procs: number;
      latencyMs: { p50: number; p99: number };
      check: { passed: boolean; counters: number };
    };
    expect(summary.procs).toBe(2);
    expect(summary.okIncrements).toBeGreaterThan(0);
    expect(summary.okIncrements % 20).toBe(0);
    expect(summary.latencyMs.p99).toBeGreaterThanOrEqual(summary.latencyMs.p50);
    expect(summary.check.passed).toBe(true);
    expect(summary.check.counters).toBeGreaterThan(1);
    // Progress lines went to stderr (not a TTY here: one per second).
    expect(result.stderr).toMatch(/increments\/s {2}errors \d+ {2}p99/);
  });

  it('bench: a keyed unary run at a target rate passes the check and stays near the rate', async () => {
    const result = await tally([
      'bench',
      '--router',
      tc.cluster.routerAddress,
      '--keyed',
      '--rate',
      '100',
      '--concurrency',
      '8',
      '--seconds',
      '2',
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { okIncrements: number; keyed: boolean; check: { passed: boolean } };
    expect(summary.keyed).toBe(true);
    expect(summary.check.passed).toBe(true);
    // Paced: never more than the rate allows (2 s at 100/s, plus one round of loops).
    expect(summary.okIncrements).toBeLessThanOrEqual(200 + 8);
  });

  it('bench: --coalesce drives unary increment calls through the coalescing client and passes the check', async () => {
    const args = ['bench', '--router', tc.cluster.routerAddress, '--coalesce', '--concurrency', '32', '--seconds', '2'];
    const result = await tally([...args, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { okIncrements: number; coalesce: boolean; batch: number; check: { passed: boolean } };
    expect(summary.coalesce).toBe(true);
    expect(summary.batch).toBe(1);
    expect(summary.okIncrements).toBeGreaterThan(0);
    expect(summary.check.passed).toBe(true);
    const withBatch = await tally([...args, '--batch', '10']);
    expect(withBatch.code).toBe(2);
    expect(withBatch.stderr.trim()).toBe('tally: --coalesce drives unary increment calls; it takes no --batch');
  });

  it('bench: a bad flag is one line and exit code 2', async () => {
    const result = await tally(['bench', '--router', tc.cluster.routerAddress, '--workload', 'lukewarm']);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe('tally: --workload must be hot, cold or mix, got "lukewarm"');
  });
});
