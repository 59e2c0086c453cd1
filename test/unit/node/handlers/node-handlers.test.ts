// The node service's handlers alone, without gRPC: a real ShardLog in a temp
// dir, real NodeMemory and group commit; only the replicator is a two-method
// fake. Bad input gets a clear status and changes nothing: no log entry, no
// role saved, no total moved.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { TallyError } from '../../../../src/wire/index.ts';
import { encodePackedComponents } from '../../../../src/wire/internal/index.ts';
import { createMetricsRegistry, type Logger, type shardV1 } from '../../../../src/common/index.ts';
import { ShardLog } from '../../../../src/node/log/index.ts';
import { DedupIndex, NodeMemory, checkpointFolder, loadRole, type NodeState } from '../../../../src/node/state/index.ts';
import { GroupCommitter } from '../../../../src/node/write/index.ts';
import { createNodeMetrics } from '../../../../src/node/node-metrics.ts';
import {
  NodeContext,
  createApplyHandler,
  createReadHandlers,
  createRoleHandlers,
  type RoleReplicator,
} from '../../../../src/node/handlers/index.ts';
import { makeTempDir, removeTempDir } from '../../../helpers/temp-dir.ts';

const epoch = 4n;

/** The replicator as a read and a SetRole see it: an answer it may refuse, acks that are already there. */
class FakeReplicator implements RoleReplicator {
  refusalText: string | undefined;
  roleChanges = 0;
  refusal(): string | undefined {
    return this.refusalText;
  }
  waitForAck(): Promise<void> {
    return Promise.resolve();
  }
  onRoleChange(): void {
    this.roleChanges++;
  }
  status(): ReturnType<RoleReplicator['status']> {
    return {
      ackedLsn: 0n,
      caughtUp: true,
      lastError: '',
      lagMs: 0,
      followerId: '',
      installing: false,
      followerLostEntries: false,
      followerAhead: false,
    };
  }
}

function item(shardId: number, amount: number): shardV1.ApplyItem__Output {
  return {
    shardId: String(shardId),
    amount: String(amount),
    idempotencyKey: Buffer.alloc(0),
    fence: false,
    routedShardCount: 1,
  } as shardV1.ApplyItem__Output;
}

function applyRequest(requestEpoch: bigint, items: shardV1.ApplyItem__Output[]): shardV1.ApplyRequest__Output {
  return { epoch: requestEpoch.toString(), groups: [{ items, increments: [] }] } as unknown as shardV1.ApplyRequest__Output;
}

/** The TallyError a handler's call fails with, as 'CODE: message', sync throw or rejection alike. */
async function failureOf(call: () => unknown): Promise<string> {
  try {
    await call();
  } catch (error) {
    expect(error).toBeInstanceOf(TallyError);
    return `${(error as TallyError).code.toUpperCase()}: ${(error as TallyError).message}`;
  }
  throw new Error('the call succeeded');
}

describe('node handlers', () => {
  let dataDir: string;
  let log: ShardLog;
  let memory: NodeMemory;
  let state: NodeState;
  let replicator: FakeReplicator;
  let context: NodeContext;
  let metrics: ReturnType<typeof createNodeMetrics>;
  let committer: GroupCommitter;

  beforeEach(() => {
    dataDir = makeTempDir('node-handlers');
    log = ShardLog.open(dataDir, checkpointFolder);
    memory = new NodeMemory();
    state = {
      ready: true,
      role: { role: 'primary', epoch, peer: '', syncRequired: false, epochStartLsn: 0n, configVersion: 0n },
      confirmedLsn: 0n,
    };
    replicator = new FakeReplicator();
    context = new NodeContext({ state, log, memory, replicator, replicationTimeoutMs: 1_000 });
    metrics = createNodeMetrics(createMetricsRegistry({ process: 'node' }));
    const dedup = new DedupIndex(60_000);
    committer = new GroupCommitter(log, memory, () => state.role, dedup, {
      onCommit: () => undefined,
      waitForFollower: () => Promise.resolve(),
    });
  });

  afterEach(() => {
    log.close();
    removeTempDir(dataDir);
  });

  let followerHoldsPacked = true;
  const apply = (request: shardV1.ApplyRequest__Output) =>
    createApplyHandler({ context, committer, metrics, followerHoldsPackedComponents: () => followerHoldsPacked })(request);

  describe('apply', () => {
    it('commits a group and answers the lsn it reached', async () => {
      const answer = await apply(applyRequest(epoch, [item(7, 5), item(7, 2)]));
      expect(answer.results.map((result) => result.code)).toEqual([status.OK]);
      expect(answer.lsn).toBe(log.lastLsn.toString());
      expect(memory.totals.get(7)).toBe(7n);
    });

    it('refuses a stale epoch FAILED_PRECONDITION, counts it and writes nothing', async () => {
      expect(await failureOf(() => apply(applyRequest(epoch - 1n, [item(7, 5)])))).toMatch(/^FAILED_PRECONDITION: stale epoch/);
      expect(log.lastLsn).toBe(0n);
      expect((await metrics.incrementsRejected.get()).values).toEqual([
        expect.objectContaining({ labels: { reason: 'stale_epoch' }, value: 1 }),
      ]);
    });

    it('refuses more items than a call may carry RESOURCE_EXHAUSTED and writes nothing', async () => {
      const items = Array.from({ length: 20_001 }, () => item(1, 1));
      expect(await failureOf(() => apply(applyRequest(epoch, items)))).toMatch(/^RESOURCE_EXHAUSTED: apply of 20001 items/);
      expect(log.lastLsn).toBe(0n);
    });

    it('refuses a packed component group FAILED_PRECONDITION while the follower has not said it holds one, and commits the other groups', async () => {
      const packed = {
        ...item(7, 0),
        amount: '0',
        op: 'REGION_COMPONENTS',
        component: encodePackedComponents([
          { shardId: 7, component: { origin: 'eu', version: { term: 1n, round: 1n }, total: 5n, generation: 0, asOfUnixMs: 1 } },
        ]),
      } as shardV1.ApplyItem__Output;
      const request = (): shardV1.ApplyRequest__Output =>
        ({
          epoch: epoch.toString(),
          groups: [
            { items: [packed], increments: [] },
            { items: [item(8, 2)], increments: [] },
          ],
        }) as unknown as shardV1.ApplyRequest__Output;
      followerHoldsPacked = false;
      const refused = await apply(request());
      expect(refused.results.map((result) => result.code)).toEqual([status.FAILED_PRECONDITION, status.OK]);
      expect(refused.results[0]!.message).toMatch(/follower has not said it holds them/);
      expect(memory.totals.get(8)).toBe(2n);
      expect(log.lastLsn).toBe(1n);
      followerHoldsPacked = true;
      const taken = await apply(request());
      expect(taken.results.map((result) => result.code)).toEqual([status.OK, status.OK]);
      expect(log.lastLsn).toBe(3n);
    });

    it('answers a bad item INVALID_ARGUMENT in its group and commits the other groups', async () => {
      const request = applyRequest(epoch, [item(0, 1)]);
      request.groups.push({ items: [item(3, 4)], increments: [] } as unknown as shardV1.ApplyGroup__Output);
      const answer = await apply(request);
      expect(answer.results.map((result) => result.code)).toEqual([status.INVALID_ARGUMENT, status.OK]);
      expect(memory.totals.get(3)).toBe(4n);
    });
  });

  describe('reads', () => {
    const reads = () => createReadHandlers(context);

    it('answer totals from memory with the node’s position', async () => {
      await apply(applyRequest(epoch, [item(2, 9)]));
      const answer = await reads().readShards({ shardIds: [2, 5], generations: [] } as never);
      expect(answer.totals).toEqual([9n, 0n]);
      expect(answer).toMatchObject({ lsn: log.lastLsn, role: 'primary', epoch, nodeId: log.nodeId });
    });

    it('refuse a window that ends before it starts INVALID_ARGUMENT', async () => {
      const request = {
        shardIds: ['2'],
        fromMs: '200',
        toMs: '100',
        bucketMs: '10',
        generations: [],
      } as unknown as shardV1.ReadWindowsRequest__Output;
      expect(await failureOf(() => reads().readWindows(request))).toBe('INVALID_ARGUMENT: bad window [200, 100)');
    });

    it('refuse shard ids and members of different lengths INVALID_ARGUMENT', async () => {
      const request = { shardIds: ['2', '3'], members: ['1'], generations: [] } as unknown as shardV1.CheckMembersRequest__Output;
      expect(await failureOf(() => reads().checkMembers(request))).toBe('INVALID_ARGUMENT: shard ids and members differ in length');
    });

    it('refuse generations that do not match the shards INVALID_ARGUMENT', async () => {
      const request = { shardIds: ['2', '3'], generations: ['1'], merge: false } as unknown as shardV1.ReadSketchesRequest__Output;
      expect(await failureOf(() => reads().readSketches(request))).toBe('INVALID_ARGUMENT: 1 generations for 2 shards');
    });

    it('refuse a shard id that is not a positive integer INVALID_ARGUMENT', async () => {
      const request = { shardIds: ['-1'] } as unknown as shardV1.ReadShardsRequest__Output;
      expect(await failureOf(() => reads().memberCounts(request))).toBe('INVALID_ARGUMENT: shard id -1 is invalid');
    });

    it('are UNAVAILABLE while the node is not ready or holds an incomplete log', async () => {
      const request = { shardIds: ['2'] } as unknown as shardV1.ReadShardsRequest__Output;
      state.ready = false;
      expect(await failureOf(() => reads().readComponents(request))).toMatch(/^UNAVAILABLE: node is not ready/);
      state.ready = true;
      log.beginInstall('install-1');
      expect(await failureOf(() => reads().readComponents(request))).toMatch(/^UNAVAILABLE: a snapshot install is under way/);
    });

    it('are UNAVAILABLE on a primary its replicator refuses, with the reason', async () => {
      replicator.refusalText = 'the follower holds more of this epoch';
      expect(await failureOf(() => reads().readShards({ shardIds: [2], generations: [] } as never))).toBe(
        'UNAVAILABLE: the follower holds more of this epoch',
      );
    });
  });

  describe('SetRole', () => {
    const roles = () => createRoleHandlers({ state, log, memory, replicator, logger: silentLogger, zone: 'z1', replicationAddress: '' });
    const setRole = (fields: Partial<shardV1.SetRoleRequest__Output>) =>
      roles().setRole({
        role: 'follower',
        epoch: String(epoch + 1n),
        peer: 'primary:1',
        syncRequired: false,
        catchUpTimeoutMs: 0,
        configVersion: '0',
        nodeId: '',
        minLastLsn: '0',
        ...fields,
      } as shardV1.SetRoleRequest__Output);

    it('obeys a newer order: saved before it answers, told to replication', async () => {
      const answer = await setRole({});
      expect(answer).toMatchObject({ role: 'follower', epoch: String(epoch + 1n), peer: 'primary:1', zone: 'z1' });
      expect(loadRole(log)).toMatchObject({ role: 'follower', epoch: epoch + 1n });
      expect(replicator.roleChanges).toBe(1);
    });

    it('refuses a role that is neither primary nor follower INVALID_ARGUMENT and changes nothing', async () => {
      expect(await failureOf(() => setRole({ role: 'leader' }))).toBe('INVALID_ARGUMENT: role must be primary or follower, got "leader"');
      expect(state.role.role).toBe('primary');
      expect(loadRole(log).epoch).toBe(0n);
      expect(replicator.roleChanges).toBe(0);
    });

    it('refuses an order for another log FAILED_PRECONDITION and changes nothing', async () => {
      expect(await failureOf(() => setRole({ nodeId: 'another-log' }))).toMatch(
        /^FAILED_PRECONDITION: node identity is .*, not another-log/,
      );
      expect(state.role.epoch).toBe(epoch);
    });

    it('refuses to make primary a log that ends before the acknowledged lsn', async () => {
      expect(await failureOf(() => setRole({ role: 'primary', minLastLsn: '5' }))).toBe(
        'FAILED_PRECONDITION: log ends at lsn 0, before the acknowledged 5',
      );
      expect(state.role.epoch).toBe(epoch);
    });

    it('refuses an order of an older epoch FAILED_PRECONDITION', async () => {
      await setRole({});
      expect(await failureOf(() => setRole({ epoch: String(epoch) }))).toMatch(/^FAILED_PRECONDITION/);
      expect(state.role.epoch).toBe(epoch + 1n);
    });
  });
});

const silentLogger: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
