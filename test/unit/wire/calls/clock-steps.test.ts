// Unit tests for G11's "no decision rests on the wall clock": the wall clock
// (Date.now) is stepped by hours either way, as NTP would, while injected
// monotonic clocks move only as far as the test says. Counter TTLs, the
// replication lag, the dedup window and the node's steady wall clock must
// not notice the step. No sleeps: every clock is a variable.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { steadyWallClock } from '../../../../src/wire/index.ts';
import { createLogger } from '../../../../src/common/index.ts';
import { CounterExpiry, type CounterDeleter } from '../../../../src/router/counters/expiry.ts';
import type { PairAddresses } from '../../../../src/router/directory/contract.ts';
import { SqliteDirectory } from '../../../../src/router/directory/sqlite/store.ts';
import { DedupIndex } from '../../../../src/node/state/dedup-index.ts';
import { GroupCommitter, type ApplyEntry, type CommitHooks } from '../../../../src/node/write/group-commit.ts';
import { NodeMemory } from '../../../../src/node/state/node-memory.ts';
import type { RoleState } from '../../../../src/node/state/node-role.ts';
import { Replicator } from '../../../../src/node/replication/replicator.ts';
import { ShardLog } from '../../../../src/node/log/index.ts';
import { makeTempDir, removeTempDir } from '../../../helpers/temp-dir.ts';

const hourMs = 3_600_000;
const pairs: PairAddresses[] = [{ primary: '127.0.0.1:1', follower: '127.0.0.1:2' }];
const logger = createLogger('test', 'error');

let dataDir: string;
/** Date.now() = real time + wallOffsetMs: a step is a change of the offset. */
let wallOffsetMs: number;

beforeEach(() => {
  dataDir = makeTempDir('clock-steps');
  wallOffsetMs = 0;
  const realNow = Date.now.bind(Date);
  vi.spyOn(Date, 'now').mockImplementation(() => realNow() + wallOffsetMs);
});

afterEach(() => {
  vi.restoreAllMocks();
  removeTempDir(dataDir);
});

describe('steady wall clock', () => {
  it('clock steps: the steady clock starts at the wall clock, then moves with the monotonic clock only', () => {
    let wallMs = 1_700_000_000_000;
    let monotonicMs = 12.5;
    const clock = steadyWallClock(
      undefined,
      () => wallMs,
      () => monotonicMs,
    );
    expect(clock()).toBe(1_700_000_000_000);
    monotonicMs += 1_000;
    wallMs += 2 * hourMs;
    expect(clock()).toBe(1_700_000_001_000);
    monotonicMs += 500;
    wallMs -= 4 * hourMs;
    expect(clock()).toBe(1_700_000_001_500);
  });

  it('clock steps: after a restart on a wall clock that went back, the steady clock starts no earlier than the log’s last entry', () => {
    let monotonicMs = 0;
    const lastAtMs = 1_700_000_000_000;
    const clock = steadyWallClock(
      lastAtMs,
      () => lastAtMs - hourMs,
      () => monotonicMs,
    );
    expect(clock()).toBe(lastAtMs);
    monotonicMs += 10;
    expect(clock()).toBe(lastAtMs + 10);
    // A wall clock ahead of the floor wins: downtime is real time.
    expect(
      steadyWallClock(
        lastAtMs,
        () => lastAtMs + 5_000,
        () => 0,
      )(),
    ).toBe(lastAtMs + 5_000);
  });
});

describe('counter TTLs', () => {
  function sweeper(directory: SqliteDirectory, now?: () => number) {
    const batches: string[][] = [];
    const deleter: CounterDeleter = {
      async deleteCounters(names, _cause, stillExpired) {
        batches.push([...names]);
        return names.filter((name) => stillExpired(name));
      },
    };
    const settings = { defaultTtlMs: 0, sweepIntervalMs: 100, checksPerSweep: 100, deletesPerSweep: 10 };
    const expiry = new CounterExpiry(directory, deleter, settings, { onExpired: () => undefined }, logger, now);
    return { expiry, batches };
  }

  it('clock steps: a counter with a 1 h TTL written just before the wall clock steps +2 h is not expired', async () => {
    // Both with their default clocks, as the router runs them.
    const directory = SqliteDirectory.open(dataDir, pairs);
    await directory.getOrCreate('fresh');
    await directory.setTtl('fresh', hourMs);
    wallOffsetMs = 2 * hourMs;
    const { expiry, batches } = sweeper(directory);
    for (let sweep = 0; sweep < 3; sweep++) await expiry.sweep();
    expect(batches).toEqual([]);
    await directory.close();
  });

  it('clock steps: a wall clock stepped back 2 h does not keep an idle counter past its TTL', async () => {
    let monotonicMs = 1_000;
    const monotonicNow = () => monotonicMs;
    const directory = SqliteDirectory.open(dataDir, pairs, undefined, undefined, monotonicNow);
    await directory.getOrCreate('idle');
    await directory.setTtl('idle', hourMs);
    wallOffsetMs = -2 * hourMs;
    const { expiry, batches } = sweeper(directory, monotonicNow);
    monotonicMs += hourMs - 1;
    await expiry.sweep();
    await expiry.sweep();
    expect(batches).toEqual([]);
    monotonicMs += 1;
    await expiry.sweep();
    expect(batches).toEqual([['idle']]);
    await directory.close();
  });
});

describe('replication lag', () => {
  it('clock steps: the lag is the age of the oldest unconfirmed commit on the monotonic clock: a −1 h step leaves it small and non-negative', () => {
    const log = ShardLog.open(dataDir);
    // A primary with no follower address yet: nothing is shipped, so nothing is confirmed.
    const role = { role: 'primary', epoch: 1n, peer: '', syncRequired: false, epochStartLsn: 0n } as RoleState;
    let monotonicMs = 5_000;
    const replicator = new Replicator(
      log,
      () => role,
      {
        batchEntriesMax: 100,
        callTimeoutMs: 1_000,
        retryDelayMs: 100,
        dedupWindowMs: 60_000,
        memoryEntriesMax: 100,
        memoryBytesMax: 1 << 20,
      },
      undefined,
      logger,
      { monotonicNow: () => monotonicMs },
    );
    const rows = [{ shardId: 1, amount: 1n, idempotencyKey: Buffer.alloc(0), fenceShardCount: 0 }];
    const lastLsn = log.append(rows, 1n, Date.now());
    replicator.onCommit(rows, lastLsn, 1n, Date.now());
    wallOffsetMs = -hourMs;
    monotonicMs += 250;
    expect(replicator.status().lagMs).toBe(250);
    wallOffsetMs = 2 * hourMs;
    expect(replicator.status().lagMs).toBe(250);
    replicator.stop();
    log.close();
  });
});

describe('dedup window', () => {
  const epoch = 3n;
  const role = { role: 'primary', epoch, peer: '', syncRequired: false, epochStartLsn: 0n } as RoleState;
  const hooks: CommitHooks = { onCommit: () => undefined, waitForFollower: () => Promise.resolve() };
  const keyed = (key: string): ApplyEntry[][] => [
    [{ shardId: 1, amount: 5n, idempotencyKey: Buffer.from(key), fenceShardCount: 0, fence: false, routedShardCount: 1, op: 'increment' }],
  ];

  it('clock steps: a keyed retry after the wall clock steps forward past the window is counted once', async () => {
    const log = ShardLog.open(dataDir);
    const memory = new NodeMemory();
    const dedup = new DedupIndex(60_000, 1_000, log);
    // The committer's default clock, as a node without an injected one.
    const committer = new GroupCommitter(log, memory, () => role, dedup, hooks);
    await committer.submit(keyed('retried'), epoch);
    wallOffsetMs = 2 * hourMs;
    const retry = await committer.submit(keyed('retried'), epoch);
    expect(retry.results[0]!.applied).toEqual([false]);
    expect(memory.totals.get(1)).toBe(5n);
    log.close();
  });

  it('clock steps: after a backward step a key still leaves when the window has passed on the monotonic clock', async () => {
    const log = ShardLog.open(dataDir);
    const memory = new NodeMemory();
    const dedup = new DedupIndex(60_000, 1_000, log);
    let monotonicMs = 0;
    const logClock = steadyWallClock(
      undefined,
      () => Date.now(),
      () => monotonicMs,
    );
    const committer = new GroupCommitter(log, memory, () => role, dedup, hooks, logClock);
    await committer.submit(keyed('once'), epoch);
    wallOffsetMs = -2 * hourMs;
    monotonicMs += 59_999;
    expect(dedup.prune(logClock())).toBe(0);
    expect((await committer.submit(keyed('once'), epoch)).results[0]!.applied).toEqual([false]);
    monotonicMs += 1;
    expect(dedup.prune(logClock())).toBe(1);
    // Past the window the key is new again, in memory and on disk.
    expect((await committer.submit(keyed('once'), epoch)).results[0]!.applied).toEqual([true]);
    expect(memory.totals.get(1)).toBe(10n);
    log.close();
  });
});
