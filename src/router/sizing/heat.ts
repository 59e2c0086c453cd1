// Per-counter heat: an exponentially weighted increment rate and its recent
// peak, plus per-shard counts for skew. O(1) per increment; an entry exists
// only for a counter incremented recently and is dropped once it cools, so
// millions of cold counters cost nothing here. At most countersMax entries:
// a writer spreading increments over more counters than that (each stays
// warm for minutes) evicts the least recently incremented, never the hot
// ones sizing is for; and a full table admits a new counter only once it has
// gathered heatAdmitIncrements lately (heat-admission.ts), so cold touches
// do not churn it. Injected clock.
import { LruMap, heatAdmitIncrements, heatAdmitSketchWidth, heatCountersMax } from '../../common/index.ts';
import { monotonicNowMs } from '../../wire/index.ts';
import { HeatAdmission } from './heat-admission.ts';

interface Heat {
  perSec: number;
  peakPerSec: number;
  lastMs: number;
  pending: number;
  /** Increments per shard index since the last sample(). */
  shardCounts: number[];
  /** The previous sample's per-shard counts and its length in ms, for skew and `tally top`. */
  sampledShardCounts: number[];
  sampledMs: number;
}

export interface HeatSample {
  counter: string;
  ratePerSec: number;
  peakPerSec: number;
  /** Increments per shard index over the last sample window. */
  shardCounts: number[];
  sampleMs: number;
}

/** max shard rate / mean shard rate over `shardCount` shards; 1 is perfectly even. */
export function skewOf(shardCounts: readonly number[], shardCount: number): number {
  if (shardCount <= 1) return 1;
  let total = 0;
  let max = 0;
  for (let index = 0; index < shardCount; index++) {
    const count = shardCounts[index] ?? 0;
    total += count;
    if (count > max) max = count;
  }
  return total === 0 ? 1 : max / (total / shardCount);
}

export class HeatTracker {
  /** In order of the last increment: the least recently incremented counter is evicted first. */
  private readonly heats: LruMap<string, Heat>;
  private lastSampleMs: number;
  private readonly admission = new HeatAdmission(heatAdmitSketchWidth);
  /** Increments of counters a full table did not take (not yet warm enough). */
  private refused = 0;

  constructor(
    /** Half-life of the moving average. */
    private readonly halfLifeMs: number,
    private readonly now: () => number = monotonicNowMs,
    /** Half-life with which a peak decays once the rate falls below it. */
    private readonly peakHalfLifeMs: number = 60_000,
    countersMax: number = heatCountersMax,
  ) {
    this.lastSampleMs = now();
    this.heats = new LruMap(countersMax);
  }

  record(name: string, increments: number, shardIndex?: number): void {
    const nowMs = this.now();
    let heat = this.heats.get(name);
    if (heat === undefined) {
      if (this.heats.size >= this.heats.entriesMax && this.admission.add(name, increments) < heatAdmitIncrements) {
        this.refused++;
        return;
      }
      heat = { perSec: 0, peakPerSec: 0, lastMs: nowMs, pending: 0, shardCounts: [], sampledShardCounts: [], sampledMs: 0 };
      this.heats.set(name, heat);
    }
    heat.pending += increments;
    if (shardIndex !== undefined) heat.shardCounts[shardIndex] = (heat.shardCounts[shardIndex] ?? 0) + increments;
    this.fold(heat, nowMs);
  }

  /** Increments per second, smoothed. */
  ratePerSec(name: string): number {
    const heat = this.heats.peek(name);
    if (heat === undefined) return 0;
    this.fold(heat, this.now());
    return heat.perSec;
  }

  /** The highest recent smoothed rate, decaying slowly: what sizing follows. */
  peakPerSec(name: string): number {
    const heat = this.heats.peek(name);
    if (heat === undefined) return 0;
    this.fold(heat, this.now());
    return heat.peakPerSec;
  }

  /**
   * Closes the current sample window: per-shard counts move to the sample
   * and restart; counters that have cooled to nothing are dropped.
   */
  sample(coldBelowPerSec = 0.01): HeatSample[] {
    const nowMs = this.now();
    const windowMs = nowMs - this.lastSampleMs;
    this.lastSampleMs = nowMs;
    this.admission.decay();
    const samples: HeatSample[] = [];
    // Deleting the entry just visited is what entries() allows.
    for (const [counter, heat] of this.heats.entries()) {
      this.fold(heat, nowMs);
      if (heat.pending === 0 && heat.perSec < coldBelowPerSec && heat.peakPerSec < coldBelowPerSec) {
        this.heats.delete(counter);
        continue;
      }
      heat.sampledShardCounts = heat.shardCounts;
      heat.sampledMs = windowMs;
      heat.shardCounts = [];
      samples.push({
        counter,
        ratePerSec: heat.perSec,
        peakPerSec: heat.peakPerSec,
        shardCounts: heat.sampledShardCounts,
        sampleMs: windowMs,
      });
    }
    return samples;
  }

  /** Forgets a counter (deleted): a new counter of the same name starts cold. */
  forget(name: string): void {
    this.heats.delete(name);
  }

  /** The last sample of one counter, if it is tracked. */
  lastSample(name: string): HeatSample | undefined {
    const heat = this.heats.peek(name);
    if (heat === undefined) return undefined;
    return {
      counter: name,
      ratePerSec: heat.perSec,
      peakPerSec: heat.peakPerSec,
      shardCounts: heat.sampledShardCounts,
      sampleMs: heat.sampledMs,
    };
  }

  get trackedCount(): number {
    return this.heats.size;
  }

  /** Touches of counters a full table did not take, not yet warm enough (heat-admission.ts). */
  get refusedCount(): number {
    return this.refused;
  }

  /** Counters forgotten while still warm because countersMax were tracked. */
  get evictedCount(): number {
    return this.heats.evictedCount;
  }

  // Folds the increments counted since lastMs into the average once at least
  // 100 ms have passed, so a burst within one tick is not read as infinite.
  private fold(heat: Heat, nowMs: number): void {
    const elapsedMs = nowMs - heat.lastMs;
    if (elapsedMs < 100) return;
    const instantPerSec = (heat.pending * 1000) / elapsedMs;
    const weight = 1 - Math.pow(0.5, elapsedMs / this.halfLifeMs);
    heat.perSec += (instantPerSec - heat.perSec) * weight;
    heat.peakPerSec = Math.max(heat.perSec, heat.peakPerSec * Math.pow(0.5, elapsedMs / this.peakHalfLifeMs));
    heat.pending = 0;
    heat.lastMs = nowMs;
  }
}
