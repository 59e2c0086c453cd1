// Automatic shard sizing (G6): a counter's shard count follows its measured
// heat, target = ceil(peak / shardCeilingPerSec) clamped to [1, shardsMax].
// Growth only (no data moves, nothing to undo), and only while the counter
// is hot now: its smoothed rate must stay above the current capacity by
// growThreshold for sustainMs (a remembered peak alone never grows a counter
// that has cooled). It then grows to the peak with headroom, so a counter
// near a boundary grows once rather than step by step. A cold counter never
// grows. Pure: injected times, no I/O.

export interface SizingSettings {
  /** Increments/s one shard is sized for. */
  shardCeilingPerSec: number;
  shardsMax: number;
  /** Grow when peak > shards x ceiling x growThreshold ... */
  growThreshold: number;
  /** ... for this long ... */
  sustainMs: number;
  /** ... to ceil(peak x headroom / ceiling) shards. */
  headroom: number;
}

export const defaultSizing: Omit<SizingSettings, 'shardCeilingPerSec' | 'shardsMax'> = {
  growThreshold: 1.1,
  sustainMs: 3_000,
  headroom: 1.25,
};

/** ceil(peak / ceiling) clamped to [1, shardsMax]. */
export function targetShards(peakPerSec: number, settings: Pick<SizingSettings, 'shardCeilingPerSec' | 'shardsMax'>): number {
  const wanted = Math.ceil(peakPerSec / settings.shardCeilingPerSec);
  return Math.min(settings.shardsMax, Math.max(1, wanted));
}

export class SizingPolicy {
  private readonly overSinceMs = new Map<string, number>();

  constructor(private readonly settings: SizingSettings) {}

  /** The shard count to grow to now, or undefined to leave the counter alone. */
  decide(
    counter: string,
    shardCount: number,
    ratePerSec: number,
    peakPerSec: number,
    nowMs: number,
    autoscale: boolean,
  ): number | undefined {
    const capacityPerSec = shardCount * this.settings.shardCeilingPerSec;
    if (!autoscale || shardCount >= this.settings.shardsMax || ratePerSec <= capacityPerSec * this.settings.growThreshold) {
      this.overSinceMs.delete(counter);
      return undefined;
    }
    const since = this.overSinceMs.get(counter);
    if (since === undefined) {
      this.overSinceMs.set(counter, nowMs);
      return undefined;
    }
    if (nowMs - since < this.settings.sustainMs) return undefined;
    this.overSinceMs.delete(counter);
    const target = targetShards(Math.max(peakPerSec, ratePerSec) * this.settings.headroom, this.settings);
    return target > shardCount ? target : undefined;
  }

  /**
   * Below this smoothed rate decide() grows no counter, whatever its shards
   * (one shard's capacity with the threshold): a tick need not look such a
   * counter up in the directory, only cool() it.
   */
  get growFromPerSec(): number {
    return this.settings.shardCeilingPerSec * this.settings.growThreshold;
  }

  /** What decide() does for a counter below growFromPerSec: it is no longer over its capacity. */
  cool(counter: string): void {
    this.overSinceMs.delete(counter);
  }

  /** Counters over their capacity, waiting out sustainMs. */
  get watchedCount(): number {
    return this.overSinceMs.size;
  }

  /** Forgets counters no longer sampled, so the map stays bounded. */
  retain(counters: ReadonlySet<string>): void {
    for (const counter of this.overSinceMs.keys()) if (!counters.has(counter)) this.overSinceMs.delete(counter);
  }
}
