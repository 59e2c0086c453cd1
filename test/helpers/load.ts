// Client-side bookkeeping for attacks: every call is ok, failed (certainly
// not applied) or unknown (may have applied). After the faults heal, an exact
// read must satisfy ok <= total <= ok + unknown for every counter.
import { status } from '@grpc/grpc-js';
import { expect } from 'vitest';
import { TallyError, type TallyClient } from '../../src/client/index.ts';
import { pause } from './cluster.ts';

// Statuses that mean the router refused before anything was sent anywhere.
const certainlyNotApplied = new Set<number>([status.INVALID_ARGUMENT, status.OUT_OF_RANGE, status.NOT_FOUND, status.RESOURCE_EXHAUSTED]);

export class Ledger {
  readonly ok = new Map<string, bigint>();
  readonly unknown = new Map<string, bigint>();
  okCalls = 0;
  unknownCalls = 0;
  failedCalls = 0;
  /** Why calls did not succeed: message (numbers masked) -> count, for a failing test's message. */
  readonly reasons = new Map<string, number>();

  recordError(error: unknown): void {
    const reason = (error instanceof Error ? error.message : String(error)).replace(/\d+/g, '#').slice(0, 160);
    this.reasons.set(reason, (this.reasons.get(reason) ?? 0) + 1);
  }

  /** The most common reasons, most frequent first. */
  topReasons(count = 5): string {
    return [...this.reasons]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([reason, times]) => `${times}x ${reason}`)
      .join('\n');
  }

  record(counter: string, amount: bigint, outcome: 'ok' | 'unknown' | 'failed'): void {
    if (outcome === 'ok') {
      this.ok.set(counter, (this.ok.get(counter) ?? 0n) + amount);
      this.okCalls++;
    } else if (outcome === 'unknown') {
      this.unknown.set(counter, (this.unknown.get(counter) ?? 0n) + amount);
      this.unknownCalls++;
    } else {
      this.failedCalls++;
    }
  }

  counters(): string[] {
    return [...new Set([...this.ok.keys(), ...this.unknown.keys()])];
  }

  /** ok <= total <= ok + unknown for every counter, from one exact ReadMany. */
  async expectWithinBounds(client: TallyClient): Promise<void> {
    const names = this.counters();
    const reads = await client.readMany(names);
    for (const read of reads) {
      const ok = this.ok.get(read.counter) ?? 0n;
      const unknown = this.unknown.get(read.counter) ?? 0n;
      expect(read.total, `${read.counter}: total ${read.total}, ok ${ok}, unknown ${unknown}`).toBeGreaterThanOrEqual(ok);
      expect(read.total, `${read.counter}: total ${read.total}, ok ${ok}, unknown ${unknown}`).toBeLessThanOrEqual(ok + unknown);
    }
  }
}

/** Reconciliation after the faults heal: no shard drifts, every follower compared and level with its primary. */
export async function expectNoDrift(client: TallyClient): Promise<void> {
  const report = await client.reconcile();
  expect(
    report.shardsDrifting,
    JSON.stringify(report.shards, (_key, value) => (typeof value === 'bigint' ? value.toString() : value)),
  ).toBe(0);
  for (const pair of report.pairs) {
    expect(pair.followerChecked, pair.note).toBe(true);
    expect(pair.followerLsn).toBe(pair.primaryLsn);
  }
}

export function classify(error: unknown): 'failed' | 'unknown' {
  return error instanceof TallyError && certainlyNotApplied.has(error.grpcCode) ? 'failed' : 'unknown';
}

/**
 * Runs `concurrency` writers of positive amounts until stop() resolves.
 * Unkeyed (so the router may move a write to any live shard, G5, and the
 * client never retries): the ledger's bounds are the whole guarantee.
 */
export function startLoad(
  client: TallyClient,
  options: {
    counters: () => string;
    concurrency: number;
    deadlineMs?: number;
    /** Items per IncrementBatch call (default 1: unary Increment). */ batchSize?: number;
  },
): { ledger: Ledger; stop: () => Promise<void> } {
  const ledger = new Ledger();
  let running = true;
  const batchSize = options.batchSize ?? 1;
  const writers = Array.from({ length: options.concurrency }, async (_, writer) => {
    let sequence = 0;
    while (running) {
      const amount = BigInt((writer % 5) + 1);
      const counters = Array.from({ length: batchSize }, () => options.counters());
      sequence++;
      try {
        const settings = { deadlineMs: options.deadlineMs ?? 3_000, idempotencyKey: null };
        if (batchSize === 1) await client.increment(counters[0]!, amount, settings);
        else
          await client.incrementBatch(
            counters.map((counter) => ({ counter, amount })),
            settings,
          );
        for (const counter of counters) ledger.record(counter, amount, 'ok');
      } catch (error) {
        for (const counter of counters) ledger.record(counter, amount, classify(error));
        ledger.recordError(error);
        // Back off a little so a dead shard does not spin the writer.
        await pause(10 + (sequence % 20));
      }
    }
  });
  return {
    ledger,
    stop: async () => {
      running = false;
      await Promise.all(writers);
    },
  };
}
