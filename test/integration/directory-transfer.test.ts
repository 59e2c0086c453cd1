// tally directory export|import with real processes: a cluster on the
// embedded directory is moved onto etcd (router stopped, export, import, a
// router started on etcd over the same nodes) and every total, shard id and
// keyed retry carries over; then back from etcd into a new SQLite directory.
// Bad use is one line and changes nothing.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProcess } from '../../src/cluster/etcd-process.ts';
import { ManagedProcess, routerMainPath } from '../../src/cluster/managed-process.ts';
import { createTallyClient } from '../../src/client/index.ts';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';
import { tally } from '../helpers/cli.ts';

describe('directory export and import', () => {
  let tc: TestCluster;
  let etcd: EtcdProcess;

  beforeAll(async () => {
    tc = await startCluster({ pairs: 2 });
    etcd = new EtcdProcess({ dataDir: path.join(tc.dataDir, 'etcd') });
    await etcd.start();
  }, 60_000);

  afterAll(async () => {
    await etcd?.kill();
    await tc?.stop();
  });

  const routerOn = (args: string[]): ManagedProcess =>
    new ManagedProcess({
      name: 'moved-router',
      script: routerMainPath,
      args: [
        '--listen',
        '127.0.0.1:0',
        '--pairs',
        [0, 1].map((pair) => `${tc.cluster.node(pair, 'primary').address},${tc.cluster.node(pair, 'follower').address}`).join(';'),
        '--metrics-port',
        '0',
        ...args,
      ],
      onLine: (name, line) => tc.logs.push(`[${name}] ${line}`),
    });

  it('a cluster moves from SQLite to etcd and back with every total, shard and key', async () => {
    const { client } = tc;
    for (let index = 0; index < 10; index++) await client.increment(`moved-${index}`, index + 1, { idempotencyKey: `key-${index}` });
    await client.setShards('moved-3', 4);
    const before = await client.describe('moved-3');
    await tc.cluster.router.stop('SIGTERM');

    const file = path.join(tc.dataDir, 'directory.json');
    const exported = await tally(['directory', 'export', '--data-dir', path.join(tc.dataDir, 'router'), '--file', file]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toMatch(/exported 10 counters, 2 pairs/);
    const imported = await tally(['directory', 'import', '--etcd', etcd.endpoint, '--etcd-prefix', '/moved/', '--file', file]);
    expect(imported.code, imported.stderr).toBe(0);
    // Importing twice is refused: the prefix is no longer empty.
    const again = await tally(['directory', 'import', '--etcd', etcd.endpoint, '--etcd-prefix', '/moved/', '--file', file]);
    expect(again.code).toBe(1);
    expect(again.stderr.trim().split('\n')).toHaveLength(1);

    const onEtcd = routerOn([
      '--etcd',
      etcd.endpoint,
      '--etcd-prefix',
      '/moved/',
      '--router-id',
      'moved',
      '--data-dir',
      path.join(tc.dataDir, 'moved'),
    ]);
    await onEtcd.start();
    const moved = createTallyClient({ address: `127.0.0.1:${onEtcd.ports!.port}`, deadlineMs: 10_000 });
    try {
      for (let index = 0; index < 10; index++) {
        expect((await moved.read(`moved-${index}`)).total).toBe(BigInt(index + 1));
        expect((await moved.increment(`moved-${index}`, 100, { idempotencyKey: `key-${index}` })).applied).toBe(false);
      }
      expect((await moved.describe('moved-3')).placements.map((shard) => shard.shardId)).toEqual(
        before.placements.map((shard) => shard.shardId),
      );
      // New counters get shard ids never used before the move.
      await moved.increment('born-on-etcd', 1);
      const newId = (await moved.describe('born-on-etcd')).placements[0]!.shardId;
      expect(newId).toBeGreaterThan(Math.max(...before.placements.map((shard) => shard.shardId)));
      expect((await moved.clusterStatus()).directoryStore).toBe('etcd');
    } finally {
      moved.close();
      await onEtcd.stop('SIGTERM');
    }

    // And back into a new embedded directory.
    const back = await tally(['directory', 'export', '--etcd', etcd.endpoint, '--etcd-prefix', '/moved/', '--file', file]);
    expect(back.code, back.stderr).toBe(0);
    const sqliteDir = path.join(tc.dataDir, 'router-again');
    expect((await tally(['directory', 'import', '--data-dir', sqliteDir, '--file', file])).code).toBe(0);
    const onSqlite = routerOn(['--data-dir', sqliteDir]);
    await onSqlite.start();
    const returned = createTallyClient({ address: `127.0.0.1:${onSqlite.ports!.port}`, deadlineMs: 10_000 });
    try {
      expect((await returned.read('born-on-etcd')).total).toBe(1n);
      expect((await returned.read('moved-9')).total).toBe(10n);
      expect((await returned.clusterStatus()).directoryStore).toBe('sqlite');
    } finally {
      returned.close();
      await onSqlite.stop('SIGTERM');
    }
  }, 120_000);

  it('bad use is one line and exits non-zero', async () => {
    const both = await tally(['directory', 'export', '--data-dir', tc.dataDir, '--etcd', etcd.endpoint]);
    expect(both.code).toBe(2);
    expect(both.stderr.trim().split('\n')).toHaveLength(1);
    const missing = await tally(['directory', 'export', '--data-dir', path.join(tc.dataDir, 'nothing')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no directory/);
    const garbage = path.join(tc.dataDir, 'garbage.json');
    fs.writeFileSync(garbage, '{"format":"something else"}');
    const bad = await tally(['directory', 'import', '--data-dir', path.join(tc.dataDir, 'fresh'), '--file', garbage]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/not a directory export/);
    expect(fs.existsSync(path.join(tc.dataDir, 'fresh', 'directory.sqlite'))).toBe(false);
  }, 60_000);
});
