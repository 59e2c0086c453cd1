// The region feed's change ring: what changed after a position, each shard
// once, up to a maximum; a position the ring no longer holds (or never gave)
// is unknown, so the caller gets a full answer instead of a silent gap.
import { describe, expect, it } from 'vitest';
import { ChangeFeed } from '../../../../src/node/state/change-feed.ts';
import { NodeMemory } from '../../../../src/node/state/index.ts';
import { EntryKind } from '../../../../src/node/log/index.ts';

describe('change feed', () => {
  it('change feed: the shards changed after a position, each once, in first-change order; more when capped', () => {
    const feed = new ChangeFeed(16);
    for (const shardId of [5, 7, 5, 9, 7]) feed.note(shardId);
    expect(feed.changedSince(0, 10)).toEqual({ shardIds: [5, 7, 9], seq: 5, more: false });
    expect(feed.changedSince(2, 10)).toEqual({ shardIds: [5, 9, 7], seq: 5, more: false });
    expect(feed.changedSince(5, 10)).toEqual({ shardIds: [], seq: 5, more: false });
    // Capped at 2: the answer covers up to the change before the third shard, and the rest follows from there.
    const first = feed.changedSince(0, 2);
    expect(first).toEqual({ shardIds: [5, 7], seq: 3, more: true });
    expect(feed.changedSince(first.seq, 2)).toEqual({ shardIds: [9, 7], seq: 5, more: false });
  });

  it('change feed: a position the ring has overwritten, a future one or a malformed one is unknown', () => {
    const feed = new ChangeFeed(4);
    for (let shardId = 1; shardId <= 6; shardId++) feed.note(shardId);
    expect(feed.knows(1)).toBe(false);
    expect(feed.knows(2)).toBe(true);
    expect(feed.changedSince(2, 10).shardIds).toEqual([3, 4, 5, 6]);
    expect(feed.knows(7)).toBe(false);
    expect(feed.knows(-1)).toBe(false);
    expect(feed.knows(1.5)).toBe(false);
    expect(() => feed.changedSince(1, 10)).toThrow();
  });

  it('change feed: memory notes what moves a total or a generation, not a key fence or a component; a clear starts another feed', () => {
    const memory = new NodeMemory();
    const { feed, started } = memory.changeFeed(64);
    expect(started).toBe(true);
    memory.apply({ shardId: 3, amount: 2n, kind: EntryKind.increment } as never, 0);
    memory.apply({ shardId: 4, amount: 0n, kind: EntryKind.increment } as never, 0);
    memory.apply({ shardId: 8, amount: -1n, kind: EntryKind.increment } as never, 0);
    expect(feed.changedSince(0, 10).shardIds).toEqual([3, 8]);
    expect(memory.changeFeed(64)).toEqual({ feed, started: false });
    memory.clear();
    const again = memory.changeFeed(64);
    expect(again.started).toBe(true);
    expect(again.feed.id).not.toBe(feed.id);
  });
});
