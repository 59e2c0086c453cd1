// A router proves its etcd directory current, not just reachable: with its
// watch lagging (responses held back at the watch, the stream up and the
// lease renewing) it stops vouching for its copy before another router's
// acknowledgement wait gives up on it, so a delete, a re-creation and a
// pair going out of sync that it has not applied are never read through it.
import { Etcd3 } from 'etcd3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EtcdDirectory, etcdClientOptions } from '../../../../../src/router/directory/etcd/index.ts';
import { EtcdProcess } from '../../../../../src/cluster/etcd-process.ts';
import type { PairAddresses } from '../../../../../src/router/directory/contract.ts';
import { TallyError } from '../../../../../src/wire/index.ts';
import { createLogger } from '../../../../../src/common/index.ts';
import { makeTempDir, removeTempDir } from '../../../../helpers/temp-dir.ts';
import { codeOfAsync } from '../../../../helpers/rejection.ts';
import { waitFor } from '../../../../helpers/cluster.ts';
import { pause } from '../../../../helpers/pause.ts';

const twoPairs: PairAddresses[] = [
  { primary: 'p0:1', follower: 'f0:1' },
  { primary: 'p1:1', follower: 'f1:1' },
];
const leaseTtlMs = 2_000;
const logger = createLogger('etcd-directory-currency-test', 'error');

describe('etcd directory currency', () => {
  let dataDir: string;
  let etcd: EtcdProcess;
  let tests = 0;
  const clients: Etcd3[] = [];
  const opened: EtcdDirectory[] = [];
  const releases: Array<() => void> = [];

  const openRouter = async (prefix: string, routerId: string): Promise<EtcdDirectory> => {
    const client = new Etcd3(etcdClientOptions([etcd.endpoint]));
    clients.push(client);
    const directory = await EtcdDirectory.open({ client, prefix, routerId, pairs: twoPairs, logger, leaseTtlMs });
    opened.push(directory);
    return directory;
  };
  /** Holds back what b's watch delivers until released (see PrefixWatch.holdDelivery). */
  const holdWatch = (directory: EtcdDirectory): (() => void) => {
    const release = directory['watch']!.holdDelivery();
    releases.push(release);
    return release;
  };
  /** Holds true for `ms` (a negative claim needs a window). */
  const staysTrue = async (check: () => boolean, ms: number): Promise<void> => {
    const untilMs = Date.now() + ms;
    while (Date.now() < untilMs) {
      expect(check()).toBe(true);
      await pause(20);
    }
  };

  beforeAll(async () => {
    dataDir = makeTempDir('etcd-directory-currency');
    etcd = new EtcdProcess({ dataDir });
    await etcd.start();
  });
  afterAll(async () => {
    await etcd.stop();
    removeTempDir(dataDir);
  });
  afterEach(async () => {
    for (const release of releases.splice(0)) release();
    for (const directory of opened.splice(0)) await directory.close();
    for (const client of clients.splice(0)) client.close();
  });

  it('an idle router stays fresh on its own proofs of currency (no change needed to move its watch)', async () => {
    const prefix = `/etcd-currency-${++tests}/`;
    const a = await openRouter(prefix, 'a');
    const b = await openRouter(prefix, 'b');
    await staysTrue(() => a.fresh && b.fresh, 3 * leaseTtlMs);
  });

  it('a router whose watch lags while its lease renews refuses exact reads and writes by the time another router’s acknowledgement wait gives up on it, and serves again once caught up', async () => {
    const prefix = `/etcd-currency-${++tests}/`;
    const a = await openRouter(prefix, 'a');
    const b = await openRouter(prefix, 'b');
    const old = await a.getOrCreate('c');
    await a.updatePair(0, { inSync: true });
    await waitFor(() => b.get('c') !== undefined && b.pair(0).inSync, { timeoutMs: 5_000, what: 'b to see c and pair 0 in sync' });
    expect(b.fresh).toBe(true);

    const release = holdWatch(b);
    // Through a: c deleted (its shards to be dropped) and pair 0 out of sync. b never
    // acknowledges them, and a's wait for it gives up: the changes stand all the same.
    expect(await codeOfAsync(() => a.deleteCounter('c'))).toBe('unavailable');
    // The moment a gave up, b no longer vouches for its copy.
    expect(b.fresh).toBe(false);
    expect(await codeOfAsync(() => a.updatePair(0, { inSync: false }))).toBe('unavailable');
    // b is alive as far as etcd and a can tell, and behind.
    expect(a.liveRouterIds()).toEqual(['a', 'b']);
    expect([b.get('c')?.shards, b.pair(0).inSync, b['watch']!.connected]).toEqual([old.shards, true, true]);
    // ...and does not vouch for what it holds.
    expect(b.fresh).toBe(false);
    const refused = await b.readBarrier(['c']).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(TallyError);
    expect([(refused as TallyError).code, (refused as TallyError).message]).toEqual([
      'unavailable',
      expect.stringMatching(/^the directory \(etcd\) cannot be proven current: .*the watch may be lagging/),
    ]);
    expect(await codeOfAsync(() => b.getOrCreate('c'))).toBe('unavailable');

    // c re-created through a, on new shards: b still refuses rather than sum the old ones.
    const created = await a.getOrCreate('c');
    expect(created.shards[0]!.shardId).not.toBe(old.shards[0]!.shardId);
    expect(await codeOfAsync(() => b.readBarrier(['c']))).toBe('unavailable');

    release();
    await waitFor(() => b.fresh, { timeoutMs: 3 * leaseTtlMs, what: 'b to catch up and prove it' });
    // Fresh: it holds every change whose acknowledgement wait gave up; the
    // re-creation (never waited for) through the read barrier's lookup.
    expect(b.get('c')?.shards).not.toEqual(old.shards);
    expect(b.pair(0).inSync).toBe(false);
    await b.readBarrier(['c']);
    expect(b.get('c')!.shards).toEqual(created.shards);
  });
});
