// The in-memory key index: window, pruning from the oldest end, and the
// memory bound that shortens the window rather than growing without end.
import { describe, expect, it } from 'vitest';
import { DedupIndex } from '../../src/node/dedup-index.ts';

const key = (text: string): Buffer => Buffer.from(text);

describe('dedup index', () => {
  it('dedup: a key is seen within the window and forgotten after it, per shard', () => {
    const index = new DedupIndex(1_000);
    index.add(1, key('a'), 7n, 0, 0);
    expect(index.get(1, key('a'), 999)?.lsn).toBe(7n);
    expect(index.get(2, key('a'), 10)).toBeUndefined();
    expect(index.get(1, key('a'), 1_000)).toBeUndefined();
  });

  it('dedup: keys that differ only in bytes past ASCII stay distinct', () => {
    const index = new DedupIndex(1_000);
    index.add(1, Buffer.from([0xff, 0x00]), 1n, 0, 0);
    expect(index.get(1, Buffer.from([0xff, 0x01]), 0)).toBeUndefined();
    expect(index.get(1, Buffer.from([0xff, 0x00]), 0)?.lsn).toBe(1n);
    expect(index.get(12, Buffer.from([0xff, 0x00]), 0)).toBeUndefined();
  });

  it('dedup: prune drops only expired keys, oldest first, at most `limit` per call', () => {
    const index = new DedupIndex(1_000);
    for (let at = 0; at < 10; at++) index.add(1, key(`k${at}`), BigInt(at + 1), at * 100, 0);
    expect(index.prune(1_450, 2)).toBe(2);
    expect(index.prune(1_450)).toBe(3);
    expect(index.size).toBe(5);
    expect(index.get(1, key('k5'), 1_450)?.lsn).toBe(6n);
  });

  it('dedup: past keysMax the oldest keys go first and the shortened window is reported', () => {
    const index = new DedupIndex(60_000, 3);
    for (let at = 0; at < 5; at++) index.add(1, key(`k${at}`), BigInt(at + 1), at * 1_000, 0);
    expect(index.size).toBe(3);
    expect(index.evictedEarly).toBe(2);
    expect(index.get(1, key('k0'), 5_000)).toBeUndefined();
    expect(index.get(1, key('k4'), 5_000)?.lsn).toBe(5n);
    expect(index.coveredMs(5_000)).toBe(3_000);
    expect(new DedupIndex(60_000).coveredMs(5_000)).toBe(60_000);
  });
});
