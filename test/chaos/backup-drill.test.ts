// The disaster drill: keyed load, a backup taken while it runs, more load,
// the whole cluster wiped (processes killed, data removed), a new cluster
// restored from the backup. Every counter must hold at least what was
// acknowledged before the backup began and at most what was acknowledged
// or in doubt before it ended; a key acknowledged before the backup is
// still a duplicate; the restored cluster serves and takes writes. Bad
// input (a damaged backup, a directory that is not one, a cluster that is
// not empty) is refused with one line and changes nothing.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { credentials, status, type ServiceError } from '@grpc/grpc-js';
import type { TallyClient } from '../../src/client/index.ts';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { EtcdProcess } from '../../src/cluster/etcd-process.ts';
import { AdminServiceClient, ShardNodeClient, shardNodeServiceDefinition, type shardV1 } from '../../src/common/index.ts';
import { shardProtocolStamp } from '../../src/wire/internal/index.ts';
import { startCluster, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { cliNodeArgs, tally } from '../helpers/cli.ts';
import { Ledger, classify } from '../helpers/load.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';

const nodeArgs = ['--checkpoint-interval-ms', '200'];
const counterCount = 12;
const counterOf = (index: number): string => `drill:${index % counterCount}`;

interface KeyedWrite {
  counter: string;
  key: string;
  amount: bigint;
}

/** Keyed writers recording every outcome in a ledger, and what is in flight at any moment. */
function startKeyedLoad(client: TallyClient, writerCount: number) {
  const ledger = new Ledger();
  const inFlight = new Map<number, KeyedWrite>();
  const acknowledged: KeyedWrite[] = [];
  let running = true;
  const writers = Array.from({ length: writerCount }, async (_, writer) => {
    for (let sequence = 0; running; sequence++) {
      const write: KeyedWrite = {
        counter: counterOf(writer * 7 + sequence),
        key: `drill-${writer}-${sequence}`,
        amount: BigInt((sequence % 3) + 1),
      };
      inFlight.set(writer, write);
      try {
        const result = await client.increment(write.counter, write.amount, { idempotencyKey: write.key, deadlineMs: 3_000 });
        expect(result.applied).toBe(true);
        ledger.record(write.counter, write.amount, 'ok');
        acknowledged.push(write);
      } catch (error) {
        ledger.record(write.counter, write.amount, classify(error));
        ledger.recordError(error);
      } finally {
        inFlight.delete(writer);
      }
    }
  });
  return {
    ledger,
    acknowledged,
    /** What may have applied by now: acknowledged, in doubt, or still in flight. */
    upperBounds(): Map<string, bigint> {
      const bounds = new Map(ledger.ok);
      for (const [counter, amount] of ledger.unknown) bounds.set(counter, (bounds.get(counter) ?? 0n) + amount);
      for (const write of inFlight.values()) bounds.set(write.counter, (bounds.get(write.counter) ?? 0n) + write.amount);
      return bounds;
    },
    stop: async () => {
      running = false;
      await Promise.all(writers);
    },
  };
}

/** The CLI, synchronously: startCluster's beforeStart runs before any process and cannot wait. */
function tallySync(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [...cliNodeArgs, ...args], { cwd: repoRoot, encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function restoreArgs(backupDir: string, dataDir: string, pairCount: number): string[] {
  return [
    'restore',
    '--from',
    backupDir,
    '--data-dir',
    path.join(dataDir, 'router'),
    '--node-data-dirs',
    Array.from({ length: pairCount }, (_, pair) => path.join(dataDir, `node-${pair}-primary`)).join(','),
  ];
}

describe('chaos: backup and restore drill', () => {
  let tc: TestCluster | undefined;
  let scratch: string | undefined;
  let etcd: EtcdProcess | undefined;
  afterEach(async () => {
    await tc?.stop();
    tc = undefined;
    await etcd?.stop();
    etcd = undefined;
    if (scratch !== undefined) removeTempDir(scratch);
    scratch = undefined;
  });

  it(
    'a backup taken under keyed load restores every counter between what was acknowledged before it began and before it ended, keeps key windows, and the restored cluster takes writes',
    { timeout: 90_000 },
    async () => {
      scratch = makeTempDir('backup-drill');
      const backupDir = path.join(scratch, 'backup');
      tc = await startCluster({ pairs: 2, nodeArgs });
      await tc.client.increment('drill:0', 1n);
      await tc.client.setShards('drill:0', 3);
      // A cleared counter: its generation must survive, so what was cleared stays cleared.
      await tc.client.increment('drill:cleared', 40n);
      await tc.client.clear('drill:cleared');
      await tc.client.increment('drill:cleared', 2n);

      const load = startKeyedLoad(tc.client, 4);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const lower = new Map(load.ledger.ok);
      lower.set('drill:0', (lower.get('drill:0') ?? 0n) + 1n);
      const keysBefore = [...load.acknowledged];
      const backup = await tally(['backup', '--out', backupDir, '--router', tc.cluster.routerAddress]);
      const upper = load.upperBounds();
      upper.set('drill:0', (upper.get('drill:0') ?? 0n) + 1n);
      expect(backup.code, backup.stderr).toBe(0);
      expect(backup.stdout).toMatch(/^backup in .*: \d+ counters, 2 pairs/);
      // More load after the backup: none of it is in the restored cluster's floor.
      await new Promise((resolve) => setTimeout(resolve, 500));
      await load.stop();
      expect(keysBefore.length, load.ledger.topReasons()).toBeGreaterThan(20);

      // Everything wiped: processes killed, data directories removed.
      const oldDataDir = tc.dataDir;
      await tc.stop();
      tc = undefined;
      expect(fs.existsSync(oldDataDir)).toBe(false);

      const verify = await tally(['backup', 'verify', '--from', backupDir]);
      expect(verify.code, verify.stderr).toBe(0);
      expect(verify.stdout).toMatch(/a whole backup \(2 pairs/);

      let restore: ReturnType<typeof tallySync> | undefined;
      tc = await startCluster({
        pairs: 2,
        nodeArgs,
        beforeStart: (dataDir) => {
          restore = tallySync(restoreArgs(backupDir, dataDir, 2));
        },
      });
      expect(restore?.code, restore?.stderr).toBe(0);
      const { client } = tc;
      await waitForHealthy(client);

      const names = [...new Set([...lower.keys(), ...upper.keys()])];
      const reads = await client.readMany(names);
      for (const read of reads) {
        const floor = lower.get(read.counter) ?? 0n;
        const ceiling = upper.get(read.counter) ?? 0n;
        expect(read.total, `${read.counter}: total ${read.total}, floor ${floor}, ceiling ${ceiling}`).toBeGreaterThanOrEqual(floor);
        expect(read.total, `${read.counter}: total ${read.total}, floor ${floor}, ceiling ${ceiling}`).toBeLessThanOrEqual(ceiling);
      }
      expect((await client.read('drill:cleared')).total).toBe(2n);
      expect((await client.describe('drill:0')).shards).toBe(3);

      // Keys acknowledged before the backup began are still duplicates.
      for (const write of [keysBefore[0]!, keysBefore[keysBefore.length - 1]!]) {
        const before = (await client.read(write.counter)).total;
        const again = await client.increment(write.counter, write.amount, { idempotencyKey: write.key });
        expect(again.applied, `${write.key} on ${write.counter}`).toBe(false);
        expect((await client.read(write.counter)).total).toBe(before);
      }
      // The restored cluster takes writes, keyed and not.
      const before = (await client.read('drill:1')).total;
      expect((await client.increment('drill:1', 5n, { idempotencyKey: 'after-restore' })).applied).toBe(true);
      await client.increment('drill:new', 1n);
      expect((await client.read('drill:1')).total).toBe(before + 5n);
      expect((await client.read('drill:new')).total).toBe(1n);

      // A restore into this cluster (not empty, running) is refused and changes nothing.
      const again = tallySync(restoreArgs(backupDir, tc.dataDir, 2));
      expect(again.code).not.toBe(0);
      expect(again.stderr.trim().split('\n')).toHaveLength(1);
      expect(again.stderr).toMatch(/already holds a node log/);
      // Empty node directories, but the directory store of a running cluster: refused, nothing written.
      const fresh = path.join(scratch, 'fresh');
      const storeInUse = tallySync([
        'restore',
        '--from',
        backupDir,
        '--data-dir',
        path.join(tc.dataDir, 'router'),
        '--node-data-dirs',
        `${fresh}/a,${fresh}/b`,
      ]);
      expect(storeInUse.code).not.toBe(0);
      expect(storeInUse.stderr).toMatch(/in use by a router|already holds/);
      expect(fs.existsSync(fresh)).toBe(false);
      expect((await client.read('drill:1')).total).toBe(before + 5n);
      expect((await client.read('drill:new')).total).toBe(1n);
    },
  );

  it(
    'backup verify names the damaged file; restore refuses a directory that is not a backup and writes nothing',
    { timeout: 60_000 },
    async () => {
      scratch = makeTempDir('backup-bad');
      const backupDir = path.join(scratch, 'backup');
      tc = await startCluster({ pairs: 1, nodeArgs });
      await tc.client.increment('bad:a', 3n, { idempotencyKey: 'k' });
      const backup = await tally(['backup', '--out', backupDir, '--router', tc.cluster.routerAddress]);
      expect(backup.code, backup.stderr).toBe(0);
      // A second backup into the same directory is refused: it is never overwritten.
      const twice = await tally(['backup', '--out', backupDir, '--router', tc.cluster.routerAddress]);
      expect(twice.code).not.toBe(0);
      expect(twice.stderr).toMatch(/already exists/);
      // A pair that does not exist: NOT_FOUND, before any node is asked.
      const admin = new AdminServiceClient(tc.cluster.routerAddress, credentials.createInsecure());
      try {
        const missing = await new Promise<ServiceError>((resolve, reject) => {
          const stream = admin.BackupPair({ pair: 7 });
          stream.on('data', () => reject(new Error('a chunk for a pair that does not exist')));
          stream.on('error', resolve);
          stream.on('end', () => reject(new Error('the stream ended without an error')));
        });
        expect(missing.code).toBe(status.NOT_FOUND);
        expect(missing.details).toMatch(/there is no pair 7/);
      } finally {
        admin.close();
      }
      // A node asked for a backup's stream while it is the follower refuses: only a primary holds the pair's state.
      const follower = new ShardNodeClient(tc.cluster.node(0, 'follower').address, credentials.createInsecure());
      try {
        const refused = await new Promise<ServiceError>((resolve, reject) => {
          const stream = follower.StreamSnapshot({ protocol: shardProtocolStamp });
          stream.on('data', () => reject(new Error('a follower streamed a snapshot')));
          stream.on('error', resolve);
          stream.on('end', () => reject(new Error('the stream ended without an error')));
        });
        expect(refused.code).toBe(status.FAILED_PRECONDITION);
        expect(refused.details).toMatch(/a backup reads a pair's primary; this node is follower/);
      } finally {
        follower.close();
      }

      // One byte changed in a pair file.
      const tampered = path.join(scratch, 'tampered');
      fs.cpSync(backupDir, tampered, { recursive: true });
      const pairFile = path.join(tampered, 'pair-0.snapshot');
      const bytes = fs.readFileSync(pairFile);
      bytes.writeUInt8(bytes.readUInt8(bytes.length - 3) ^ 0x40, bytes.length - 3);
      fs.writeFileSync(pairFile, bytes);
      const verify = await tally(['backup', 'verify', '--from', tampered]);
      expect(verify.code).not.toBe(0);
      expect(verify.stderr.trim().split('\n')).toHaveLength(1);
      expect(verify.stderr).toMatch(/pair-0\.snapshot/);
      // A value changed inside a piece (a shard total in a checkpoint chunk, or a byte of an entry block when
      // the checkpoint is empty), the file re-framed and the manifest's size and SHA-256 made to match: the
      // piece's own CRC-32 finds it.
      const forged = path.join(scratch, 'forged');
      fs.cpSync(backupDir, forged, { recursive: true });
      const original = fs.readFileSync(path.join(forged, 'pair-0.snapshot'));
      const codec = shardNodeServiceDefinition.StreamSnapshot!;
      const frames: Buffer[] = [];
      for (let offset = 0; offset < original.length; offset += 4 + original.readUInt32LE(offset))
        frames.push(original.subarray(offset + 4, offset + 4 + original.readUInt32LE(offset)));
      const first = codec.responseDeserialize(frames[0]!) as shardV1.SnapshotStreamPiece__Output;
      let expectedError: RegExp;
      if (first.chunk!.shards.length > 0) {
        first.chunk!.shards[0]!.total = (BigInt(first.chunk!.shards[0]!.total) + 1n).toString();
        frames[0] = codec.responseSerialize(first);
        expectedError = /pair-0\.snapshot: chunk 0 fails its CRC-32/;
      } else {
        const index = frames.findIndex((frame) => (codec.responseDeserialize(frame) as shardV1.SnapshotStreamPiece__Output).entryCount > 0);
        const piece = codec.responseDeserialize(frames[index]!) as shardV1.SnapshotStreamPiece__Output;
        piece.columns.writeUInt8(piece.columns.readUInt8(8) ^ 0x01, 8);
        frames[index] = codec.responseSerialize(piece);
        expectedError = /pair-0\.snapshot: entries after lsn \d+ fail their CRC-32/;
      }
      const forgedBytes = Buffer.concat(
        frames.flatMap((frame) => {
          const length = Buffer.alloc(4);
          length.writeUInt32LE(frame.length, 0);
          return [length, frame];
        }),
      );
      fs.writeFileSync(path.join(forged, 'pair-0.snapshot'), forgedBytes);
      const manifestFile = path.join(forged, 'manifest.json');
      const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as {
        files: { name: string; sha256: string; sizeBytes: number }[];
      };
      const entry = manifest.files.find((file) => file.name === 'pair-0.snapshot')!;
      entry.sha256 = createHash('sha256').update(forgedBytes).digest('hex');
      entry.sizeBytes = forgedBytes.length;
      fs.writeFileSync(manifestFile, JSON.stringify(manifest));
      const verifyCrc = await tally(['backup', 'verify', '--from', forged]);
      expect(verifyCrc.code).not.toBe(0);
      expect(verifyCrc.stderr).toMatch(expectedError);

      // Not a backup: the cluster's own data directory, and an empty one.
      const target = path.join(scratch, 'target');
      for (const from of [tc.dataDir, scratch]) {
        const refused = await tally(restoreArgs(from, target, 1));
        expect(refused.code).not.toBe(0);
        expect(refused.stderr.trim().split('\n')).toHaveLength(1);
        expect(refused.stderr).toMatch(/is not a tally backup/);
      }
      // A damaged backup is not restored either.
      const damaged = await tally(restoreArgs(tampered, target, 1));
      expect(damaged.code).not.toBe(0);
      expect(damaged.stderr).toMatch(/pair-0\.snapshot/);
      expect(fs.existsSync(target)).toBe(false);
      // The cluster still serves what it held.
      expect((await tc.client.read('bad:a')).total).toBe(3n);
    },
  );
  it(
    'backup restore into etcd: a backup of a pair whose follower is down carries the entries past its checkpoint; the directory goes under a new prefix, the routers register their pairs, keys stay duplicates; a prefix holding keys is refused and nothing is written',
    { timeout: 60_000 },
    async () => {
      scratch = makeTempDir('backup-etcd');
      const backupDir = path.join(scratch, 'backup');
      etcd = new EtcdProcess({ dataDir: path.join(scratch, 'etcd') });
      await etcd.start();
      // The follower down: its primary keeps its recent entries unfolded, so they travel as entries past the
      // checkpoint, not as totals (a backup taken while a pair is out of sync).
      tc = await startCluster({ pairs: 1, nodeArgs, routerArgs: ['--follower-timeout-ms', '800'] });
      await tc.client.increment('etcd:b', 2n);
      await tc.cluster.node(0, 'follower').process.stop('SIGKILL');
      await tc.client.increment('etcd:a', 7n, { idempotencyKey: 'etcd-key' });
      const backup = await tally(['backup', '--out', backupDir, '--router', tc.cluster.routerAddress]);
      expect(backup.code, backup.stderr).toBe(0);
      const manifest = JSON.parse(fs.readFileSync(path.join(backupDir, 'manifest.json'), 'utf8')) as {
        pairs: { snapshotLsn: string; endLsn: string }[];
      };
      expect(BigInt(manifest.pairs[0]!.endLsn)).toBeGreaterThan(BigInt(manifest.pairs[0]!.snapshotLsn));
      await tc.stop();
      tc = undefined;

      const restoreInto = (dataDir: string): ReturnType<typeof tallySync> =>
        tallySync([
          'restore',
          '--from',
          backupDir,
          '--etcd',
          etcd!.endpoint,
          '--etcd-prefix',
          '/restored/',
          '--node-data-dirs',
          path.join(dataDir, 'node-0-primary'),
        ]);
      let restore: ReturnType<typeof tallySync> | undefined;
      tc = await startCluster({
        pairs: 1,
        nodeArgs,
        etcd: { endpoint: etcd.endpoint, prefix: '/restored/' },
        beforeStart: (dataDir) => {
          restore = restoreInto(dataDir);
        },
      });
      expect(restore?.code, restore?.stderr).toBe(0);
      await waitForHealthy(tc.client);
      expect((await tc.client.read('etcd:a')).total).toBe(7n);
      expect((await tc.client.read('etcd:b')).total).toBe(2n);
      expect((await tc.client.increment('etcd:a', 7n, { idempotencyKey: 'etcd-key' })).applied).toBe(false);
      expect((await tc.client.increment('etcd:a', 1n)).applied).toBe(true);
      expect((await tc.client.read('etcd:a')).total).toBe(8n);

      // The prefix now holds a directory: refused, and the node directory it was given is left as it was (absent).
      const fresh = path.join(scratch, 'fresh');
      const refused = restoreInto(fresh);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
      expect(refused.stderr).toMatch(/already holds/);
      expect(fs.existsSync(path.join(fresh, 'node-0-primary'))).toBe(false);
      expect((await tc.client.read('etcd:a')).total).toBe(8n);
    },
  );
  it(
    'backup over TLS: the admin token takes a backup through the node-only internal API; a client token is refused and leaves nothing',
    { timeout: 60_000 },
    async () => {
      scratch = makeTempDir('backup-tls');
      tc = await startCluster({ pairs: 1, nodeArgs, secure: true });
      await tc.client.increment('tls:a', 4n, { idempotencyKey: 'tls-key' });
      const certDir = tc.certDir!;
      const common = ['--router', tc.cluster.routerAddress, '--tls-ca', path.join(certDir, 'ca.crt')];
      const refused = await tally([
        'backup',
        '--out',
        path.join(scratch, 'client'),
        ...common,
        '--token-file',
        path.join(certDir, 'client.token'),
      ]);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/permission_denied: this credential may not call AdminService/);
      expect(fs.readdirSync(scratch)).toEqual([]);
      const backup = await tally([
        'backup',
        '--out',
        path.join(scratch, 'admin'),
        ...common,
        '--token-file',
        path.join(certDir, 'admin.token'),
      ]);
      expect(backup.code, backup.stderr).toBe(0);
      const verify = await tally(['backup', 'verify', '--from', path.join(scratch, 'admin')]);
      expect(verify.code, verify.stderr).toBe(0);
      expect(verify.stdout).toMatch(/a whole backup \(1 pair, \d+ pieces?, 1 counter,/);
    },
  );
});
