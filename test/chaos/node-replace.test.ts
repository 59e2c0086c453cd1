// Replacing a lost machine: `tally node replace` moves a pair's follower slot
// to a new node on a new address, which is filled by snapshot install and
// takes over when the primary dies; the directory's addresses survive a
// router restart with --pairs still naming the lost machine. Bad requests
// get a clear status and change nothing.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { ManagedProcess, nodeMainPath } from '../../src/cluster/managed-process.ts';
import { startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { rejection } from '../helpers/rejection.ts';
import { tally } from '../helpers/cli.ts';

const routerArgs = ['--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'];

describe('chaos: node replacement', () => {
  let tc: TestCluster | undefined;
  let spare: ManagedProcess | undefined;
  afterEach(async () => {
    await spare?.stop('SIGKILL');
    spare = undefined;
    await tc?.stop();
    tc = undefined;
  });

  it(
    'a lost follower machine is replaced by a new node that is filled by snapshot, takes over on failover, and holds every acknowledged increment',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({ pairs: 1, routerArgs, nodeArgs: ['--checkpoint-interval-ms', '200', '--checkpoint-retain-entries', '0'] });
      const { client, cluster } = tc;
      await client.increment('replace:total', 1);
      await client.setShards('replace:total', 3);
      await waitForHealthy(client);
      const keys = Array.from({ length: 100 }, (_, index) => `replace-key-${index}`);
      for (const key of keys) await client.increment('replace:total', 2, { idempotencyKey: key });
      await client.incrementBatch(Array.from({ length: 200 }, () => ({ counter: 'replace:total', amount: 1, idempotencyKey: null })));
      const acknowledged = 1n + 200n + 200n;

      // The follower's machine is lost for good.
      const lost = cluster.node(0, 'follower');
      await lost.process.stop('SIGKILL');
      // Writes go on alone; the primary folds them into its checkpoint.
      await client.incrementBatch(Array.from({ length: 100 }, () => ({ counter: 'replace:total', amount: 1, idempotencyKey: null })));
      const total = acknowledged + 100n;

      // The new node starts first, on a port of its own choosing; then it is named.
      const newDir = path.join(tc.dataDir, 'node-new');
      spare = new ManagedProcess({
        name: 'node-new',
        script: nodeMainPath,
        args: ['--listen', '127.0.0.1:0', '--data-dir', newDir, '--metrics-port', '0', '--node-name', 'node-new'],
        onLine: (name, line) => tc!.logs.push(`[${name}] ${line}`),
      });
      await spare.start();
      const newAddress = `127.0.0.1:${spare.ports!.port}`;

      // Bad requests change nothing.
      const primaryAddress = cluster.node(0, 'primary').address;
      expect((await rejection(client.replaceNode(primaryAddress, newAddress))).grpcCode).toBe(status.FAILED_PRECONDITION);
      expect((await rejection(client.replaceNode('127.0.0.1:1', newAddress))).grpcCode).toBe(status.NOT_FOUND);
      expect((await rejection(client.replaceNode(lost.address, 'no-port'))).grpcCode).toBe(status.INVALID_ARGUMENT);
      expect((await rejection(client.replaceNode(lost.address, primaryAddress))).grpcCode).toBe(status.FAILED_PRECONDITION);
      const cli = await tally(['node', 'replace', primaryAddress, newAddress, '--router', cluster.routerAddress]);
      expect(cli.code).not.toBe(0);
      expect(cli.stderr.trim().split('\n')).toHaveLength(1);
      expect((await client.describe('replace:total')).placements[0]!.follower).toBe(lost.address);

      const replaced = await tally(['node', 'replace', lost.address, newAddress, '--router', cluster.routerAddress]);
      expect(replaced.stderr).toBe('');
      expect(replaced.code).toBe(0);
      expect(replaced.stdout).toContain(newAddress);

      // Filled by snapshot install (the primary had folded past an empty log), then in sync.
      await waitForHealthy(client, 30_000);
      expect(tc.logs.some((line) => line.startsWith('[node-new]') && line.includes('"msg":"snapshot installed"'))).toBe(true);
      const status0 = await client.clusterStatus();
      expect(status0.nodes.map((node) => node.address).sort()).toEqual([primaryAddress, newAddress].sort());

      // The router restarts with --pairs still naming the lost machine: the directory wins.
      await cluster.router.stop('SIGKILL');
      await cluster.router.start();
      expect(tc.logs.some((line) => line.startsWith('[router]') && line.includes('since a node replacement'))).toBe(true);
      await waitForHealthy(client, 30_000);

      // The primary dies: the new node takes over with everything.
      await cluster.node(0, 'primary').process.stop('SIGKILL');
      await waitFor(async () => (await client.describe('replace:total')).placements[0]!.primary === newAddress, {
        timeoutMs: 15_000,
        what: 'the new node promoted',
      });
      expect((await client.read('replace:total')).total).toBe(total);
      for (const key of keys.slice(0, 10))
        expect((await client.increment('replace:total', 2, { idempotencyKey: key })).applied).toBe(false);
      expect((await client.read('replace:total')).total).toBe(total);
      expect(fs.existsSync(path.join(newDir, 'node.sqlite'))).toBe(true);
    },
  );
});
