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

  it('a mixed batched run in two processes passes the exact-read check', async () => {
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

  it('a keyed unary run at a target rate passes the check and stays near the rate', async () => {
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

  it('--coalesce drives unary increment calls through the coalescing client and passes the check', async () => {
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

  it('--stream drives batches on IncrementStream, in two processes, and passes the check', async () => {
    const args = ['bench', '--router', tc.cluster.routerAddress, '--workload', 'mix', '--counters', '50', '--stream', '--batch', '20'];
    const result = await tally([...args, '--concurrency', '8', '--procs', '2', '--seconds', '2', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout) as { okIncrements: number; stream: boolean; batch: number; check: { passed: boolean } };
    expect(summary.stream).toBe(true);
    expect(summary.batch).toBe(20);
    expect(summary.okIncrements).toBeGreaterThan(0);
    expect(summary.check.passed).toBe(true);
    const withCoalesce = await tally([...args, '--coalesce']);
    expect(withCoalesce.code).toBe(2);
  });

  it('a zipf run creates its population first, passes the check, and page reads of that population find every counter', async () => {
    const runId = `zipf${process.pid}`;
    const common = ['bench', '--router', tc.cluster.routerAddress, '--counters', '2000', '--run-id', runId, '--seconds', '1', '--json'];
    const zipf = await tally([...common, '--workload', 'zipf', '--zipf-s', '1.1', '--batch', '50', '--concurrency', '2', '--procs', '2']);
    expect(zipf.code, zipf.stderr).toBe(0);
    const summary = JSON.parse(zipf.stdout) as {
      okIncrements: number;
      creation: { counters: number; failedCalls: number };
      check: { passed: boolean; counters: number; sampled: boolean };
    };
    expect(summary.creation).toMatchObject({ counters: 2000, failedCalls: 0 });
    expect(summary.okIncrements).toBeGreaterThan(0);
    // 2,000 counters are under the sample's size: every one is read, against its total before the run.
    expect(summary.check).toMatchObject({ passed: true, counters: 2000, sampled: false });
    const page = await tally([...common, '--workload', 'page', '--no-prefill', '--page-size', '50', '--rate', '20', '--concurrency', '2']);
    expect(page.code, page.stderr).toBe(0);
    const reads = JSON.parse(page.stdout) as {
      callsPerSec: number;
      countersReadPerSec: number;
      check: { passed: boolean; counters: number };
    };
    expect(reads.check.passed).toBe(true);
    expect(reads.check.counters % 50).toBe(0);
    expect(reads.check.counters).toBeGreaterThan(0);
  });

  it('a bad flag is one line and exit code 2', async () => {
    const result = await tally(['bench', '--router', tc.cluster.routerAddress, '--workload', 'lukewarm']);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe('tally: --workload must be hot, cold, mix, zipf or page, got "lukewarm"');
  });
});
