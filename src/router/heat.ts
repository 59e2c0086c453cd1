// Per-counter heat: an exponentially weighted increment rate, O(1) per
// increment, kept only for counters that were incremented. Injected clock.

interface Rate {
  perSec: number;
  lastMs: number;
  pending: number;
}

export class HeatTracker {
  private readonly rates = new Map<string, Rate>();

  constructor(
    /** Time constant of the moving average. */
    private readonly halfLifeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  record(name: string, increments: number): void {
    const nowMs = this.now();
    let rate = this.rates.get(name);
    if (rate === undefined) this.rates.set(name, (rate = { perSec: 0, lastMs: nowMs, pending: 0 }));
    rate.pending += increments;
    this.fold(rate, nowMs);
  }

  /** Increments per second, smoothed. */
  ratePerSec(name: string): number {
    const rate = this.rates.get(name);
    if (rate === undefined) return 0;
    this.fold(rate, this.now());
    return rate.perSec;
  }

  // Folds the increments counted since lastMs into the average once at least
  // 100 ms have passed, so a burst within one tick is not read as infinite.
  private fold(rate: Rate, nowMs: number): void {
    const elapsedMs = nowMs - rate.lastMs;
    if (elapsedMs < 100) return;
    const instantPerSec = (rate.pending * 1000) / elapsedMs;
    const weight = 1 - Math.pow(0.5, elapsedMs / this.halfLifeMs);
    rate.perSec += (instantPerSec - rate.perSec) * weight;
    rate.pending = 0;
    rate.lastMs = nowMs;
  }
}
