// An increment waiting for a failover (its shard's node refused it, nothing
// was sent) stops waiting once its call has ended: nothing more is sent for a
// caller who is gone. The node pool is a stand-in whose every node refuses
// before committing (NotAppliedError), the outcome a down primary gives; the
// directory and the increment path are the real ones.
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../../src/wire/index.ts';
import { SqliteDirectory as Directory } from '../../../../src/router/directory/sqlite/store.ts';
import { IncrementPath } from '../../../../src/router/write/increment-path.ts';
import { NotAppliedError } from '../../../../src/router/nodes/node-sender.ts';
import type { NodePool } from '../../../../src/router/nodes/node-pool.ts';
import { makeTempDir, removeTempDir } from '../../../helpers/temp-dir.ts';
import { pause } from '../../../helpers/pause.ts';

describe('increment path cancellation', () => {
  it('router: a call that ends while its increment waits for a failover fails DEADLINE_EXCEEDED and stops sending', async () => {
    const dataDir = makeTempDir('increment-cancel');
    const directory = Directory.open(dataDir, [{ primary: 'p0:1', follower: 'f0:1' }]);
    let sends = 0;
    const pool = {
      get: () => ({
        sender: {
          async sendGroup() {
            sends++;
            throw new NotAppliedError(ErrorCode.unavailable, 'node down: nothing sent');
          },
        },
      }),
      isKnownDown: () => true,
    } as unknown as NodePool;
    const path = new IncrementPath(directory, pool, 60_000, 30_000);
    try {
      const call = { cancelled: false };
      const applying = path.apply([{ counter: 'c', amount: 1, idempotencyKey: Buffer.from('k1') }], call).catch((error: unknown) => error);
      await pause(300);
      const sendsWhenCancelled = sends;
      expect(sendsWhenCancelled).toBeGreaterThan(0);
      call.cancelled = true;
      const failure = (await applying) as { code: string };
      expect(failure.code).toBe(ErrorCode.deadlineExceeded);
      // Not the 30 s failover wait's UNAVAILABLE; at most one more send after the call ended.
      expect(sends - sendsWhenCancelled).toBeLessThanOrEqual(1);
    } finally {
      directory.close();
      removeTempDir(dataDir);
    }
  });
});
