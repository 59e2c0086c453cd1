// An exact read that a DeleteCounter overtakes: the delete commits while the
// read waits for one pair, and that pair's shard is dropped (reads 0) before
// the read reaches it. The read must not return the other pair's half of the
// old total: it answers as after the delete. The node pool is a stand-in
// (its answers are what ReadShards answers for live and dropped shards); the
// directory and the reader are the real ones.
import { describe, expect, it } from 'vitest';
import { SqliteDirectory as Directory } from '../../../../src/router/directory/sqlite/store.ts';
import { readExact } from '../../../../src/router/read/exact-reader.ts';
import type { NodePool } from '../../../../src/router/nodes/node-pool.ts';
import { makeTempDir, removeTempDir } from '../../../helpers/temp-dir.ts';
import { pause } from '../../../helpers/pause.ts';

describe('read during delete', () => {
  it('router: an exact read overlapping a delete answers 0, never a partial sum of the old shards', async () => {
    const dataDir = makeTempDir('read-delete');
    const directory = Directory.open(dataDir, [
      { primary: 'p0:1', follower: 'f0:1' },
      { primary: 'p1:1', follower: 'f1:1' },
    ]);
    try {
      await directory.getOrCreate('x');
      await directory.setShards('x', 2);
      expect(new Set(directory.get('x')!.shards.map((shard) => shard.pairIndex))).toEqual(new Set([0, 1]));
      const dropped = new Set<number>();
      let releaseSecondPair = (): void => undefined;
      let secondPairAnswers: Promise<void> | undefined = undefined;
      const pool = {
        async readShards(address: string, shardIds: number[]) {
          if (address === 'p1:1' && secondPairAnswers !== undefined) await secondPairAnswers;
          return {
            totals: shardIds.map((id) => (dropped.has(id) ? '0' : '50')),
            newerGenerationIndexes: [],
            lsn: '1',
            role: 'primary',
            epoch: '1',
            nodeId: address,
          };
        },
        isKnownDown: () => false,
      } as unknown as NodePool;

      // Nothing deleted: the whole total.
      expect((await readExact(['x'], directory, pool, 1_000)).totals.get('x')!.total).toBe(100n);

      // The second pair answers only after the delete committed and dropped the shards.
      secondPairAnswers = new Promise<void>((resolve) => (releaseSecondPair = resolve));
      const reading = readExact(['x'], directory, pool, 1_000);
      await pause(10);
      const deleted = await directory.deleteCounter('x');
      for (const shard of deleted.shards) dropped.add(shard.shardId);
      releaseSecondPair();
      const read = (await reading).totals.get('x')!;
      expect(read.total).toBe(0n);
      expect(read.shardCount).toBe(0);
      expect(read.source).toBeUndefined();
    } finally {
      directory.close();
      removeTempDir(dataDir);
    }
  });
});
