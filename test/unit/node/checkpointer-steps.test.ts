// A checkpoint fold hands the event loop back in short steps: reads and
// merges run until a step has held the loop for stepMs, then yield; the
// commit (one transaction) gets a step of its own. The checkpoint it writes
// is the same however the fold is cut into steps. The clock is injected and
// charges each log call a fixed cost, so no test measures real time.
import { describe, expect, it } from 'vitest';
import { Checkpointer, type CheckpointSettings } from '../../../src/node/write/checkpointer.ts';
import type { ShardLog } from '../../../src/node/log/index.ts';
import type { NodeState } from '../../../src/node/state/index.ts';
import type { Replicator } from '../../../src/node/replication/index.ts';
import type { Logger } from '../../../src/common/index.ts';
import { useTempLogs } from '../../helpers/temp-log.ts';
import { plainEntry } from '../../helpers/log-entries.ts';

const silent: Logger = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as unknown as Logger;

/** 30 commits of 100 increments spread over 20,000 shards (~79 checkpoint blocks). */
function fillSpread(log: ShardLog): void {
  for (let commit = 0; commit < 30; commit++)
    log.append(
      Array.from({ length: 100 }, (_, item) => plainEntry(1 + ((commit * 7_919 + item * 104_729) % 20_000), BigInt(1 + (item % 3)))),
      1n,
      1_000,
    );
}

interface Trace {
  /** Log calls (read, merge, commit) in order, with 'yield' where the fold handed the loop back. */
  events: string[];
  checkpointer: Checkpointer;
}

/** A checkpointer over log whose clock advances callCostMs on every read and merge call (the commit costs nothing). */
function traced(log: ShardLog, settings: Partial<CheckpointSettings>, callCostMs: number): Trace {
  let clockMs = 0;
  const events: string[] = [];
  const charge = <A extends unknown[], R>(name: string, call: (...args: A) => R) => {
    return (...args: A): R => {
      events.push(name);
      clockMs += callCostMs;
      return call(...args);
    };
  };
  log.foldRead = charge('read', log.foldRead.bind(log));
  log.foldPrepare = charge('merge', log.foldPrepare.bind(log));
  const commit = log.foldCommit.bind(log);
  log.foldCommit = (...args) => {
    events.push('commit');
    return commit(...args);
  };
  const state = { ready: true, role: { role: 'follower' }, confirmedLsn: log.lastLsn };
  const checkpointer = new Checkpointer(
    log,
    state as unknown as NodeState,
    {} as Replicator,
    {
      intervalMs: 3_600_000,
      sliceRows: 200,
      stepMs: 3,
      mergeBlocks: 8,
      roundRowsMax: 1_000_000,
      dedupWindowMs: 0,
      retainEntries: 0,
      tombstoneMs: 0,
      ...settings,
    },
    { onFold: () => {}, onFoldRead: () => {}, onYield: () => events.push('yield') },
    silent,
    () => 1_000,
    () => clockMs,
  );
  return { events, checkpointer };
}

/** The calls between yields, as runs: ['read', 'read'], ['merge'], ... */
function stepsOf(events: string[]): string[][] {
  const steps: string[][] = [[]];
  for (const event of events) {
    if (event === 'yield') steps.push([]);
    else steps.at(-1)!.push(event);
  }
  return steps.filter((step) => step.length > 0);
}

describe('checkpointer steps', () => {
  const { open } = useTempLogs('steps');

  it('a fold yields once a step has held the loop for stepMs, and its commit runs in a step of its own', async () => {
    const log = open();
    fillSpread(log);
    const { events, checkpointer } = traced(log, { stepMs: 3 }, 1);
    await checkpointer.run();
    const steps = stepsOf(events);
    // 3,000 rows in slices of 200 (15 reads), ~79 blocks merged 8 a call (10 merges): several steps, none over 3 calls.
    expect(events.filter((event) => event === 'read').length).toBeGreaterThanOrEqual(15);
    expect(events.filter((event) => event === 'merge').length).toBeGreaterThanOrEqual(10);
    for (const step of steps) {
      if (step.includes('commit')) expect(step).toEqual(['commit']);
      else expect(step.length).toBeLessThanOrEqual(3);
    }
    expect(steps.filter((step) => step.includes('commit'))).toHaveLength(1);
    expect(log.checkpointLsn).toBe(log.lastLsn);
  });

  it('a step whose calls cost nothing runs the fold through without yielding until the commit', async () => {
    const log = open();
    fillSpread(log);
    const { events, checkpointer } = traced(log, { stepMs: 3 }, 0);
    await checkpointer.run();
    const steps = stepsOf(events);
    // Reads and merges in one step, the commit in the next.
    expect(steps[0]!.every((event) => event !== 'commit')).toBe(true);
    expect(steps[1]).toEqual(['commit']);
  });

  it('the checkpoint is the same however the fold is cut into steps', async () => {
    const totals: Map<number, bigint>[] = [];
    for (const [stepMs, sliceRows, mergeBlocks] of [
      [0, 1, 1],
      [3, 200, 8],
      [1_000, 5_000, 256],
    ] as const) {
      const log = open();
      fillSpread(log);
      const { checkpointer } = traced(log, { stepMs, sliceRows, mergeBlocks }, 1);
      await checkpointer.run();
      expect(log.checkpointLsn).toBe(3_000n);
      totals.push(log.checkpointTotals());
    }
    expect(totals[0]!.size).toBeGreaterThan(2_000);
    expect(totals[1]).toEqual(totals[0]);
    expect(totals[2]).toEqual(totals[0]);
  });
});
