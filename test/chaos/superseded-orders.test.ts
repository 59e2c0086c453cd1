// G1 and G9 against orders the directory has superseded: a SetRole sent late
// (a deposed supervisor paused between its directory write and its order, a
// delayed or duplicated call) must not make an in-sync primary acknowledge
// alone. Each order carries the pair's configuration version; the node
// refuses one it has superseded, whatever its epoch or timing.
import { afterEach, describe, expect, it } from 'vitest';
import { credentials, status as grpcStatus, type ServiceError } from '@grpc/grpc-js';
import { ShardNodeClient, type shardV1 } from '../../src/common/index.ts';
import { startCluster, waitFor, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import { Ledger, classify } from '../helpers/load.ts';
import { pause } from '../helpers/pause.ts';

// A slow health check: the supervisor's own belt (it demotes a primary it
// finds not requiring its follower) must not be what saves the data here.
const routerArgs = ['--health-interval-ms', '3000', '--failover-timeout-ms', '1500', '--follower-timeout-ms', '800'];

function call<Req, Res>(rpc: shardV1.ShardNodeClient, method: 'Status' | 'SetRole', request: Req): Promise<Res> {
  return new Promise((resolve, reject) => {
    const unaryCall = (rpc as unknown as Record<string, (...args: unknown[]) => void>)[method]!.bind(rpc);
    unaryCall(request, { deadline: Date.now() + 5_000 }, (error: ServiceError | null, response: Res) =>
      error ? reject(error) : resolve(response),
    );
  });
}

describe('chaos: superseded orders', () => {
  let tc: TestCluster | undefined;
  let rpc: shardV1.ShardNodeClient | undefined;
  afterEach(async () => {
    rpc?.close();
    rpc = undefined;
    await tc?.stop();
    tc = undefined;
  });

  it(
    'a late SetRole(primary, sync not required) at the version an in-sync primary obeyed is refused; with its follower paused and then the primary killed, nothing acknowledged is lost',
    { timeout: 90_000 },
    async () => {
      tc = await startCluster({ pairs: 1, routerArgs });
      const { client, cluster } = tc;
      const ledger = new Ledger();
      await client.increment('late', 1, { idempotencyKey: 'late-0' });
      ledger.record('late', 1n, 'ok');
      await waitForHealthy(client);
      const primary = cluster.node(0, 'primary');
      const follower = cluster.node(0, 'follower');
      rpc = new ShardNodeClient(primary.address, credentials.createInsecure());
      const before = await call<shardV1.StatusRequest, shardV1.StatusResponse__Output>(rpc, 'Status', {});
      expect(before.syncRequired).toBe(true);

      // What a superseded supervisor would send: derived from the directory
      // version the primary already obeyed, before the pair was recorded in sync.
      const stale: shardV1.SetRoleRequest = {
        role: 'primary',
        epoch: before.epoch,
        peer: before.peer,
        syncRequired: false,
        nodeId: before.nodeId,
        configVersion: before.configVersion,
      };
      const refusal = await call(rpc, 'SetRole', stale).then(
        () => undefined,
        (error: ServiceError) => error,
      );
      // A duplicate of an older order is refused the same way.
      const older = await call(rpc, 'SetRole', { ...stale, configVersion: String(BigInt(before.configVersion) - 1n) }).then(
        () => undefined,
        (error: ServiceError) => error,
      );

      // Whatever the node answered, attack as if it had obeyed: follower paused,
      // keyed writes, the primary killed, the follower back.
      follower.process.signal('SIGSTOP');
      for (let index = 1; index <= 40; index++) {
        try {
          await client.increment('late', 1, { idempotencyKey: `late-${index}`, deadlineMs: 150 });
          ledger.record('late', 1n, 'ok');
        } catch (error) {
          ledger.record('late', 1n, classify(error));
        }
      }
      await primary.process.stop('SIGKILL');
      follower.process.signal('SIGCONT');
      // Time for the supervisor to act on the dead primary (it promotes only an in-sync follower).
      await waitFor(async () => (await client.clusterStatus()).nodes[1]!.health !== 'UNREACHABLE', {
        timeoutMs: 10_000,
        what: 'the follower to answer again',
      });
      await pause(2_500);
      await primary.process.start();
      await waitForHealthy(client);
      await ledger.expectWithinBounds(client);

      expect(refusal?.code, 'a same-version order dropping sync must be refused').toBe(grpcStatus.FAILED_PRECONDITION);
      expect(refusal?.details).toMatch(/superseded order/);
      expect(older?.code).toBe(grpcStatus.FAILED_PRECONDITION);
      const after = await call<shardV1.StatusRequest, shardV1.StatusResponse__Output>(rpc, 'Status', {});
      expect(BigInt(after.configVersion)).toBeGreaterThanOrEqual(BigInt(before.configVersion));
    },
  );

  it(
    'SetRole(primary, sync required) answers only once the follower holds the whole log: sent with the follower paused behind, it fails, and nothing acknowledged alone is lost',
    { timeout: 90_000 },
    async () => {
      // The supervisor marks a pair in sync when this order answers, even with the follower up
      // to 5,000 entries behind when it decided: the node's catch-up wait is what makes that safe.
      tc = await startCluster({ pairs: 1, routerArgs });
      const { client, cluster } = tc;
      const ledger = new Ledger();
      await client.increment('catch-up', 1, { idempotencyKey: 'catch-up-0' });
      ledger.record('catch-up', 1n, 'ok');
      await waitForHealthy(client);
      const primary = cluster.node(0, 'primary');
      const follower = cluster.node(0, 'follower');
      rpc = new ShardNodeClient(primary.address, credentials.createInsecure());

      follower.process.signal('SIGSTOP');
      let answer: shardV1.StatusResponse__Output | ServiceError;
      try {
        await waitFor(async () => !(await client.clusterStatus()).nodes[0]!.inSync, {
          timeoutMs: 10_000,
          what: 'the pair out of sync: the primary acknowledges alone',
        });
        for (let index = 1; index <= 30; index++) {
          try {
            await client.increment('catch-up', 1, { idempotencyKey: `catch-up-${index}`, deadlineMs: 2_000 });
            ledger.record('catch-up', 1n, 'ok');
          } catch (error) {
            ledger.record('catch-up', 1n, classify(error));
          }
        }
        expect(ledger.okCalls).toBeGreaterThan(20);
        // The order a supervisor sends when it finds the follower nearly caught up, reaching
        // the primary after the follower stopped (paused between the decision and the order).
        const now = await call<shardV1.StatusRequest, shardV1.StatusResponse__Output>(rpc, 'Status', {});
        expect(now.syncRequired).toBe(false);
        answer = await call<shardV1.SetRoleRequest, shardV1.StatusResponse__Output>(rpc, 'SetRole', {
          role: 'primary',
          epoch: now.epoch,
          peer: now.peer,
          syncRequired: true,
          nodeId: now.nodeId,
          configVersion: now.configVersion,
          catchUpTimeoutMs: 500,
        }).catch((error: ServiceError) => error);
      } finally {
        follower.process.signal('SIGCONT');
      }
      expect(answer instanceof Error, `answered ${JSON.stringify(answer)} while the follower lacked what was acknowledged`).toBe(true);

      await waitForHealthy(client);
      // In sync again, by the supervisor's own order: the follower holds everything, so it may take over.
      await primary.process.stop('SIGKILL');
      await waitFor(async () => (await client.describe('catch-up')).placements[0]!.primary === follower.address, {
        timeoutMs: 15_000,
        what: 'the follower promoted',
      });
      await ledger.expectWithinBounds(client);
    },
  );
});
