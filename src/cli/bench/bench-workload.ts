// What `tally bench` draws and checks: the workloads' counter pickers over a
// population of counters, the creation of that population before a run (so
// creation is measured apart), and the sample of counters the end-of-run
// check reads. Shared with bench/compare-load.mts, which drives Redis and
// PostgreSQL with the same seeded draws. No timing decisions here.
import assert from 'node:assert';
import { readManyCountersMax, monotonicNowMs } from '../../wire/index.ts';
import { ZipfSampler, type SeededRandom } from './bench-zipf.ts';

export const workloads = ['hot', 'cold', 'mix', 'zipf', 'page'] as const;
export type Workload = (typeof workloads)[number];

/** The workloads that draw from the population of --counters counters (all but hot). */
export function usesPopulation(workload: Workload): boolean {
  return workload !== 'hot';
}

/** Share of a mix run's increments that go to the hot counter (the rest: uniform over the population). */
const mixHotShare = 0.8;
/** The population index that stands for the run's one hot counter. */
export const hotIndex = -1;

/** The run's counter names: one hot counter and a population `<prefix>:cold:<index>`, index 0 the Zipf head. */
export class CounterNames {
  readonly prefix: string;
  constructor(runId: string) {
    this.prefix = `bench:${runId}`;
  }
  name(index: number): string {
    return index === hotIndex ? `${this.prefix}:hot` : `${this.prefix}:cold:${index}`;
  }
}

export interface DrawSettings {
  workload: Workload;
  /** Population size: counters 0..counters-1. */
  counters: number;
  zipfExponent: number;
}

/** The seed of one load-generating process: each process of a run draws its own sequence. */
export function processSeed(seed: number, processIndex: number): number {
  return seed * 1_024 + processIndex;
}

/**
 * A picker of population indexes (hotIndex for the hot counter): hot, uniform
 * cold, 80/20 mix, Zipf (index = rank - 1) or, for page reads, uniform cold.
 */
export function indexPicker(settings: DrawSettings, random: SeededRandom): () => number {
  switch (settings.workload) {
    case 'hot':
      return () => hotIndex;
    case 'cold':
    case 'page':
      return () => random.nextIndex(settings.counters);
    case 'mix':
      return () => (random.nextDouble() < mixHotShare ? hotIndex : random.nextIndex(settings.counters));
    case 'zipf': {
      const sampler = new ZipfSampler(settings.counters, settings.zipfExponent, random);
      return () => sampler.nextRank() - 1;
    }
  }
}

/** Population indexes the check always reads: the Zipf head, where most increments land. */
const checkHeadCounters = 1_000;
/** Population indexes the check reads beyond the head, spread evenly over the rest. */
const checkSpreadCounters = 20_000;

/**
 * The counters the end-of-run check reads: the hot counter, the first 1,000
 * of the population and every stride-th after them, so a 10-million-counter
 * population is checked on about 21,000 counters (all of it up to 21,000).
 * Fixed before the run, so load generators count only these (one array slot
 * each), and a baseline read before the run lets a population that already
 * holds totals (created earlier, or by an earlier run) be checked too.
 */
export class CheckSample {
  readonly head: number;
  readonly stride: number;
  /** Slots: 0 is the hot counter, then the head, then the spread. */
  readonly size: number;

  constructor(readonly population: number) {
    this.head = Math.min(population, checkHeadCounters);
    this.stride = Math.max(1, Math.ceil((population - this.head) / checkSpreadCounters));
    this.size = 1 + this.head + Math.ceil((population - this.head) / this.stride);
  }

  /** The slot of a population index (hotIndex: slot 0), or -1 when the check does not read it. */
  slot(index: number): number {
    if (index < this.head) return index + 1;
    const offset = index - this.head;
    return offset % this.stride === 0 ? 1 + this.head + offset / this.stride : -1;
  }

  /** The population index of a slot (slot 0: hotIndex). */
  indexOf(slot: number): number {
    if (slot === 0) return hotIndex;
    return slot <= this.head ? slot - 1 : this.head + (slot - 1 - this.head) * this.stride;
  }

  /** True when every counter of the population is read. */
  get whole(): boolean {
    return this.stride === 1;
  }
}

/** Acknowledged and maybe-applied increments of a run's check sample, per slot. */
export class SampleTallies {
  readonly ok: Float64Array;
  readonly unknown: Float64Array;
  constructor(readonly sample: CheckSample) {
    this.ok = new Float64Array(sample.size);
    this.unknown = new Float64Array(sample.size);
  }
  /** Counts one acknowledged (or, when the call failed, maybe applied) increment of an index. */
  add(index: number, amount: number, acknowledged: boolean): void {
    const slot = this.sample.slot(index);
    if (slot >= 0) (acknowledged ? this.ok : this.unknown)[slot]! += amount;
  }
}

/** What the creation of a population took. */
export interface PopulationCreation {
  counters: number;
  durationMs: number;
  countersPerSec: number;
  /** Calls that failed: their counters may not exist (the check's baseline read covers them). */
  failedCalls: number;
}

/** The one method creation needs from a client. */
export interface BatchIncrementer {
  incrementBatch(items: { counter: string; amount: number; idempotencyKey: null }[]): Promise<unknown>;
}

/** Counters per creation call. */
export const creationBatchItems = 1_000;

/**
 * Creates counters 0..count-1 by incrementing each once (amount 1: the node
 * holds the shard as a cold counter does), `concurrency` calls in flight.
 * Progress goes to onProgress about once a second.
 */
export async function createPopulation(
  client: BatchIncrementer,
  names: CounterNames,
  count: number,
  concurrency: number,
  onProgress?: (created: number) => void,
): Promise<PopulationCreation> {
  assert(count >= 1 && concurrency >= 1);
  const startedMs = monotonicNowMs();
  let next = 0;
  let created = 0;
  let failedCalls = 0;
  let reportedMs = startedMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const first = next;
        next = Math.min(count, next + creationBatchItems);
        const items = [];
        for (let index = first; index < next; index++) items.push({ counter: names.name(index), amount: 1, idempotencyKey: null });
        try {
          await client.incrementBatch(items);
          created += items.length;
        } catch {
          failedCalls++;
        }
        if (onProgress !== undefined && monotonicNowMs() - reportedMs >= 1_000) {
          reportedMs = monotonicNowMs();
          onProgress(created);
        }
      }
    }),
  );
  const durationMs = monotonicNowMs() - startedMs;
  return { counters: created, durationMs: Math.round(durationMs), countersPerSec: Math.round((created * 1000) / durationMs), failedCalls };
}

/** The one method a check needs from a client. */
export interface ManyReader {
  readMany(counters: readonly string[]): Promise<{ counter: string; total: bigint }[]>;
}

/** Exact totals of the given counters (0 for one never written), in calls of readManyCountersMax. */
export async function readTotals(client: ManyReader, counters: readonly string[]): Promise<bigint[]> {
  const totals: bigint[] = [];
  for (let offset = 0; offset < counters.length; offset += readManyCountersMax) {
    for (const read of await client.readMany(counters.slice(offset, offset + readManyCountersMax))) totals.push(read.total);
  }
  return totals;
}

/**
 * When a paced load's call is due, and waits for it: loop `loop` of
 * `concurrency` sends its `sent`-th call at startedMs + (sent + loop /
 * concurrency) * loopIntervalMs, the loops staggered so the calls spread
 * evenly. Returns the time to measure the call's latency from: when it was
 * due, or when it left if a timer fired a little early. Unpaced
 * (loopIntervalMs 0), it waits for nothing and returns now.
 */
export async function untilDue(
  pacing: { startedMs: number; loopIntervalMs: number; concurrency: number },
  loop: number,
  sent: number,
): Promise<number> {
  const nowMs = monotonicNowMs();
  if (pacing.loopIntervalMs <= 0) return nowMs;
  const dueMs = pacing.startedMs + (sent + loop / pacing.concurrency) * pacing.loopIntervalMs;
  if (dueMs > nowMs) await new Promise((resolve) => setTimeout(resolve, dueMs - nowMs));
  return Math.min(dueMs, monotonicNowMs());
}
