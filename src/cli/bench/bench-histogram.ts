// A mergeable latency histogram: log-spaced buckets 5% wide, so percentiles
// are within 5% and workers in other processes can send theirs as a small array.

const growth = 1.05;
const logGrowth = Math.log(growth);
const bucketCount = 500; // 1 µs .. ~39 s

export class LatencyHistogram {
  readonly counts: number[];
  count = 0;
  maxMicros = 0;

  constructor(counts?: number[]) {
    this.counts = counts ?? new Array<number>(bucketCount).fill(0);
    if (counts) this.count = counts.reduce((sum, value) => sum + value, 0);
  }

  record(micros: number): void {
    const bucket = micros <= 1 ? 0 : Math.min(bucketCount - 1, Math.ceil(Math.log(micros) / logGrowth));
    this.counts[bucket]!++;
    this.count++;
    if (micros > this.maxMicros) this.maxMicros = micros;
  }

  merge(other: LatencyHistogram): void {
    for (let bucket = 0; bucket < bucketCount; bucket++) this.counts[bucket]! += other.counts[bucket]!;
    this.count += other.count;
    this.maxMicros = Math.max(this.maxMicros, other.maxMicros);
  }

  /** The latency at quantile q (0..1), in milliseconds: the upper edge of its bucket. */
  quantileMs(q: number): number {
    if (this.count === 0) return 0;
    const rank = Math.ceil(q * this.count);
    let seen = 0;
    for (let bucket = 0; bucket < bucketCount; bucket++) {
      seen += this.counts[bucket]!;
      if (seen >= rank) return Math.min(growth ** bucket, this.maxMicros) / 1000;
    }
    return this.maxMicros / 1000;
  }
}
