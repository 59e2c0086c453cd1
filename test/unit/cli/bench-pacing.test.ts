// untilDue: the one pacing rule of `tally bench --rate` and of the load
// compare.sh drives against Redis and PostgreSQL, so both systems see calls
// spread the same way and timed from the same moment.
import { describe, expect, it } from 'vitest';
import { untilDue } from '../../../src/cli/bench/bench-workload.ts';
import { monotonicNowMs } from '../../../src/wire/index.ts';

describe('untilDue', () => {
  it('spreads the loops evenly over one interval and times a late call from when it was due', async () => {
    const startedMs = monotonicNowMs() - 10_000;
    const pacing = { startedMs, loopIntervalMs: 100, concurrency: 4 };
    // Every call here is already overdue: no wait, and the latency clock starts at the due time.
    expect(await untilDue(pacing, 0, 0)).toBe(startedMs);
    expect(await untilDue(pacing, 1, 0)).toBe(startedMs + 25);
    expect(await untilDue(pacing, 3, 2)).toBe(startedMs + 275);
  });

  it('unpaced, waits for nothing and times the call from now', async () => {
    const beforeMs = monotonicNowMs();
    const startMs = await untilDue({ startedMs: 0, loopIntervalMs: 0, concurrency: 8 }, 5, 1_000_000);
    expect(startMs).toBeGreaterThanOrEqual(beforeMs);
    expect(startMs).toBeLessThanOrEqual(monotonicNowMs());
  });

  it('waits for a call not yet due, and never times it from before it left', async () => {
    const pacing = { startedMs: monotonicNowMs(), loopIntervalMs: 50, concurrency: 1 };
    const startMs = await untilDue(pacing, 0, 1);
    expect(startMs).toBeLessThanOrEqual(pacing.startedMs + 50);
    expect(startMs).toBeLessThanOrEqual(monotonicNowMs());
    // Returned only once due, or a timer's early firing apart, as it left.
    expect(monotonicNowMs()).toBeGreaterThanOrEqual(startMs);
  });
});
