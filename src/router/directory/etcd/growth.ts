// Growth across routers: setShards writes the new shards with
// writableShardCount unchanged (announced: every exact read includes them,
// no write goes there); each router that applies an announcement writes
// its presence's seenRevision past it; the grower waits until every
// presence says so (a dead router's lease expires and its presence goes),
// then activates in a second transaction (writableShardCount rises, the
// growth is recorded). A growth a crashed grower left announced is
// activated by the next setShards of the counter, or by any router's
// periodic pass once it has been announced longer than the activation wait.
import { ErrorCode, TallyError, monotonicNowMs } from '../../../wire/index.ts';
import { directoryChangeAttemptsMax, type Logger } from '../../../common/index.ts';
import type { CounterInfo } from '../contract.ts';
import type { CounterCreation } from './counters.ts';
import { counterKeyPrefix, encodeCounter, storedCounterOf } from './schema.ts';
import type { EtcdMirror } from './mirror.ts';
import type { EtcdTransactions } from './transactions.ts';

export interface GrowthContext {
  mirror: EtcdMirror;
  txns: EtcdTransactions;
  creation: CounterCreation;
  /** The clock of stored data (grownMs). */
  now: () => number;
  logger: Logger;
  routerId: string;
  /** How long a grower waits for every live router's acknowledgement (RouterPresence.acknowledgementWaitMs). */
  acknowledgementWaitMs: () => number;
  assertFresh: () => void;
  fresh: () => boolean;
  closed: () => boolean;
}

export class GrowthProtocol {
  private finishing = false;

  constructor(private readonly context: GrowthContext) {}

  /**
   * Grows a counter: announces the new shards (read by every router's
   * exact read, written by none), waits until every live router has
   * acknowledged them, then activates them and records the growth.
   * Finishes a growth left announced as well. previousShardCount: the
   * shards writes went to before.
   */
  async setShards(name: string, shardCount: number): Promise<{ previousShardCount: number; counter: CounterInfo }> {
    const { mirror, txns, creation } = this.context;
    const { model } = mirror;
    const counter = model.checkShardCountChange(name, shardCount);
    const heldShardCount = counter.shards.length;
    const previousShardCount = counter.writableShardCount;
    if (shardCount > heldShardCount) {
      model.checkShardsTotal(shardCount - heldShardCount);
      await txns.change(
        `growing ${name}`,
        () => {
          const current = model.existing(name);
          if (shardCount <= current.shards.length) return { done: undefined };
          model.checkShardsTotal(shardCount - current.shards.length);
          const stored = storedCounterOf(current, mirror.record(name)!.clearKeys);
          const chosen = model.place(current.shards, shardCount - current.shards.length, model.placementTotals());
          const ids = creation.takeShardIds(chosen.length);
          chosen.forEach((pairIndex, index) => stored.shards.push([ids[index]!, pairIndex]));
          return {
            read: [counterKeyPrefix + name],
            ops: [txns.put(counterKeyPrefix + name, encodeCounter(name, stored))],
            result: () => undefined,
          };
        },
        () => creation.reserveShardIds(Math.max(0, shardCount - (model.get(name)?.shards.length ?? shardCount))),
      );
    }
    await this.activate(name);
    return { previousShardCount, counter: model.get(name) ?? counter };
  }

  /**
   * Makes a counter's announced shards writable once every live router has
   * acknowledged them: exactly the shards acknowledged (a later
   * announcement waits for its own round). Bounded by the activation wait
   * per round and by directoryChangeAttemptsMax rounds.
   */
  private async activate(name: string): Promise<void> {
    const { mirror, txns } = this.context;
    const { model } = mirror;
    const waitMs = this.context.acknowledgementWaitMs();
    for (let round = 1; ; round++) {
      const counter = model.get(name);
      const record = mirror.record(name);
      if (counter === undefined || record === undefined || counter.writableShardCount >= counter.shards.length) return;
      if (round > directoryChangeAttemptsMax)
        throw new TallyError(ErrorCode.unavailable, `activating the growth of ${name}: other changes came first ${round - 1} times`);
      this.context.assertFresh();
      const announcedRevision = record.modRevision;
      const announcedShardCount = counter.shards.length;
      await txns.waitUntil(
        () => !model.same(model.get(name), counter) || mirror.unacknowledged(announcedRevision).length === 0,
        waitMs,
        () =>
          `router(s) ${mirror.unacknowledged(announcedRevision).join(', ')} to acknowledge the growth of ${name} to ${announcedShardCount} shards (it stays announced: read, not written, until they do or their lease expires)`,
      );
      await txns.change(`activating the growth of ${name}`, () => {
        const current = model.get(name);
        // Deleted, re-created, or activated meanwhile by another router: nothing of this round to do.
        if (current === undefined || !model.same(current, counter) || current.writableShardCount >= announcedShardCount)
          return { done: undefined };
        const stored = storedCounterOf(current, mirror.record(name)!.clearKeys);
        stored.growths.push({ previousShardCount: current.writableShardCount, grownMs: this.context.now() });
        stored.writableShardCount = announcedShardCount;
        return {
          read: [counterKeyPrefix + name],
          ops: [txns.put(counterKeyPrefix + name, encodeCounter(name, stored))],
          result: () => undefined,
        };
      });
    }
  }

  /**
   * A growth a grower left announced (it crashed, or gave up waiting) is
   * activated by any router once it has been announced longer than the
   * activation wait, one counter at a time.
   */
  async finishAnnounced(): Promise<void> {
    const { mirror } = this.context;
    if (this.finishing || !this.context.fresh() || mirror.announced.size === 0) return;
    this.finishing = true;
    try {
      const cutoffMs = monotonicNowMs() - this.context.acknowledgementWaitMs();
      for (const name of [...mirror.announced]) {
        const sinceMs = mirror.record(name)?.announcedSinceMs;
        if (sinceMs === undefined || sinceMs > cutoffMs || this.context.closed()) continue;
        try {
          await this.activate(name);
          this.context.logger.info('activated a growth left announced', { counter: name, router: this.context.routerId });
        } catch (error) {
          this.context.logger.warn('a growth left announced is still not active', { counter: name, error: (error as Error).message });
          // The same router holds the others back: the next pass tries again.
          break;
        }
      }
    } finally {
      this.finishing = false;
    }
  }
}
