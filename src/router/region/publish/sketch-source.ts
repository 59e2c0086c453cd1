// The distinct counters' part of a publisher round: each counter's union
// sketch in this region, read from its shards like CountDistinct reads it.
// Registers only rise within a clear generation, so a later round's sketch
// holds every register an earlier one did; a clear shows as a higher
// generation, as for totals. It never writes.
import type { CounterInfo } from '../../directory/index.ts';
import type { HllSketch } from '../../../sketch/index.ts';

export interface SketchReads {
  union(names: readonly string[]): Promise<{ union: HllSketch; shardCount: number }>;
}

export interface SketchRead {
  counter: string;
  /** The serialized union of the counter's shard sketches. */
  sketch: Buffer;
  /** Its estimate, shown as the component's total. */
  estimate: bigint;
  generation: number;
}

/** A distinct counter without a window: its registers are published, merged by register maximum in the peers. */
export function publishesSketch(counter: CounterInfo): boolean {
  return counter.kind === 'distinct' && counter.window.bucketMs === 0;
}

/**
 * Each named counter's sketch, read now; a counter that could not be read,
 * or was cleared or deleted while it was read (its generation would not say
 * which registers it holds), is in `retry`.
 */
export async function readSketches(
  names: readonly string[],
  directory: { get(name: string): CounterInfo | undefined },
  reads: SketchReads,
): Promise<{ sketches: SketchRead[]; retry: string[]; firstError?: Error }> {
  const sketches: SketchRead[] = [];
  const retry: string[] = [];
  let firstError: Error | undefined;
  for (const name of names) {
    const before = directory.get(name);
    if (before === undefined || !publishesSketch(before)) continue;
    let union: HllSketch;
    try {
      ({ union } = await reads.union([name]));
    } catch (error) {
      firstError ??= error as Error;
      retry.push(name);
      continue;
    }
    const after = directory.get(name);
    if (after === undefined) continue;
    if (after.generation !== before.generation || after.shards[0]?.shardId !== before.shards[0]?.shardId) {
      retry.push(name);
      continue;
    }
    // An empty sketch has nothing to merge: it ships only to carry a clear's generation.
    sketches.push({
      counter: name,
      sketch: union.serialize(),
      estimate: BigInt(Math.round(union.estimate())),
      generation: before.generation,
    });
  }
  return { sketches, retry, ...(firstError === undefined ? {} : { firstError }) };
}
