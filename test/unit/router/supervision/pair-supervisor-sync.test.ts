// The supervisor against nodes that keep the SetRole rule (node-role.ts
// refusalOf): a pair whose primary took "require your follower" under the
// directory's version while the directory never recorded it in sync (the
// in-sync write failed, or the supervisor lost its lease between the two)
// must still come back in sync, or, with its follower gone, be told to
// acknowledge alone as the directory says. Found by the nemesis (seed 1):
// the supervisor asked the primary to drop sync under that same version,
// which the node rightly refuses, every round, and the pair stayed out of
// sync for good; and a first check that failed on the directory left a
// router that believed it supervised with no check ever running again.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { Logger, shardV1 } from '../../../../src/common/index.ts';
import { nextPairState, type Directory, type PairInfo, type PairUpdate } from '../../../../src/router/directory/contract.ts';
import type { NodePool } from '../../../../src/router/nodes/node-pool.ts';
import { PairSupervisor } from '../../../../src/router/supervision/pair-supervisor.ts';
import { createRouterMetrics } from '../../../../src/router/metrics/router-metrics.ts';
import { refusalOf, type RoleState } from '../../../../src/node/state/node-role.ts';

const P = '10.0.0.1:50061';
const F = '10.0.0.2:50061';

/** A node as far as SetRole and Status go: it obeys only orders refusalOf allows. */
class FakeNode {
  up = true;
  lastLsn = 500n;
  followerCaughtUp = true;
  constructor(
    readonly nodeId: string,
    public role: RoleState,
  ) {}

  status(): shardV1.StatusResponse__Output {
    const isPrimary = this.role.role === 'primary';
    return {
      role: this.role.role,
      epoch: this.role.epoch.toString(),
      lastLsn: this.lastLsn.toString(),
      peer: this.role.peer,
      syncRequired: this.role.syncRequired,
      ready: true,
      nodeId: this.nodeId,
      installing: false,
      followerId: isPrimary ? 'log-f' : '',
      followerAckedLsn: isPrimary && this.followerCaughtUp ? this.lastLsn.toString() : '0',
      followerCaughtUp: isPrimary && this.followerCaughtUp,
      replicationLagMs: '0',
      configVersion: this.role.configVersion.toString(),
      followerLostEntries: false,
    } as shardV1.StatusResponse__Output;
  }

  setRole(request: shardV1.SetRoleRequest): shardV1.StatusResponse__Output {
    const order = {
      role: request.role as 'primary' | 'follower',
      epoch: BigInt(request.epoch as string),
      peer: request.peer!,
      syncRequired: request.role === 'primary' && request.syncRequired === true,
      configVersion: BigInt((request.configVersion as string | undefined) ?? '0'),
    };
    const refusal = refusalOf(this.role, order);
    if (refusal !== undefined) throw new Error(`9 FAILED_PRECONDITION: ${refusal}`);
    this.role = {
      ...order,
      epochStartLsn: this.role.epochStartLsn,
      configVersion: order.configVersion > this.role.configVersion ? order.configVersion : this.role.configVersion,
    };
    if (this.role.role === 'primary' && this.role.syncRequired && !this.followerCaughtUp)
      throw new Error(`14 UNAVAILABLE: follower did not confirm lsn ${this.lastLsn}`);
    return this.status();
  }
}

function setUp(options: { followerUp: boolean; primaryRequiresSync?: boolean }) {
  const pair: PairInfo = {
    pairIndex: 0,
    primary: P,
    follower: F,
    epoch: 2n,
    inSync: false,
    primaryId: 'log-p',
    followerId: 'log-f',
    ackedLsn: 400n,
    legacy: false,
    replaced: false,
    addedOnline: false,
    draining: false,
    configVersion: 13n,
    advertised: {},
  };
  // The primary already obeyed "require your follower" under version 13: the directory never recorded it in sync.
  const primary = new FakeNode('log-p', {
    role: 'primary',
    epoch: 2n,
    peer: F,
    syncRequired: options.primaryRequiresSync ?? true,
    epochStartLsn: 100n,
    configVersion: 13n,
  });
  const follower = new FakeNode('log-f', {
    role: 'follower',
    epoch: 2n,
    peer: P,
    syncRequired: false,
    epochStartLsn: 0n,
    configVersion: 10n,
  });
  follower.up = options.followerUp;
  if (!options.followerUp) primary.followerCaughtUp = false;
  const nodes = new Map([
    [P, primary],
    [F, follower],
  ]);
  const directoryState = { failWrites: 0, writes: 0 };
  const directory = {
    allPairs: () => [pair],
    pairOf: (address: string) => (address === P || address === F ? pair : undefined),
    updatePair: (_index: number, update: PairUpdate) => {
      if (directoryState.failWrites > 0) {
        directoryState.failWrites--;
        return Promise.reject(new Error('the directory (etcd) cannot be proven current'));
      }
      directoryState.writes++;
      // In place, as both stores do: a check's pair is the live one.
      Object.assign(pair, nextPairState(pair, update));
      return Promise.resolve(pair);
    },
  } as unknown as Directory;
  const reach = (address: string): FakeNode => {
    const node = nodes.get(address)!;
    if (!node.up) throw new Error(`node ${address} is unreachable: 14 UNAVAILABLE: Deadline exceeded`);
    return node;
  };
  const pool = {
    status: (address: string) => Promise.resolve().then(() => reach(address).status()),
    setRole: (address: string, request: shardV1.SetRoleRequest) => Promise.resolve().then(() => reach(address).setRole(request)),
  } as unknown as NodePool;
  const quiet = (): void => undefined;
  const logger: Logger = { debug: quiet, info: quiet, warn: quiet, error: quiet } as unknown as Logger;
  let nowMs = 0;
  const supervisor = new PairSupervisor(
    directory,
    pool,
    createRouterMetrics(new Registry()),
    logger,
    { healthIntervalMs: 200, healthTimeoutMs: 100, failoverTimeoutMs: 1_000, followerTimeoutMs: 500, catchUpTimeoutMs: 300 },
    () => nowMs,
  );
  const advance = (ms: number): void => {
    nowMs += ms;
  };
  return { supervisor, primary, follower, directoryState, pair: () => pair, advance };
}

describe('supervisor: a primary that requires its follower under a version the directory never recorded in sync', () => {
  it('follower caught up: the pair is recorded in sync (the primary is not asked to drop sync under that same version)', async () => {
    const { supervisor, primary, pair, advance } = setUp({ followerUp: true });
    for (let round = 0; round < 5 && !pair().inSync; round++) {
      await supervisor.checkAll();
      advance(200);
    }
    expect(pair().inSync, `pair after 5 rounds: version ${pair().configVersion}, primary ${JSON.stringify(primary.status())}`).toBe(true);
    expect(primary.role.syncRequired).toBe(true);
  });

  it('follower gone: the primary is told, under a newer version, to acknowledge alone as the directory says', async () => {
    const { supervisor, primary, pair, advance } = setUp({ followerUp: false });
    for (let round = 0; round < 5 && primary.role.syncRequired; round++) {
      await supervisor.checkAll();
      advance(200);
    }
    expect(primary.role.syncRequired, `primary after 5 rounds: ${JSON.stringify(primary.status())}`).toBe(false);
    expect(pair().inSync).toBe(false);
    expect(primary.role.configVersion).toBe(pair().configVersion);
  });

  it('the in-sync write fails after the primary took the order: checkAll still resolves, and the next check records the pair in sync', async () => {
    // As the nemesis found it: the supervisor's first check after it took the
    // lease back; the primary obeys, the directory cannot be proven current.
    const { supervisor, primary, pair, directoryState, advance } = setUp({ followerUp: true, primaryRequiresSync: false });
    directoryState.failWrites = 1;
    // A rejection here left main.ts's superviseOrNot believing it supervised, with its ticker never started.
    await expect(supervisor.checkAll()).resolves.toBeUndefined();
    expect(primary.role.syncRequired).toBe(true);
    expect(pair().inSync).toBe(false);
    advance(200);
    await supervisor.checkAll();
    expect(pair().inSync).toBe(true);
  });

  it('the floor goes with the out-of-sync transition: what the follower confirmed is written to the directory as the pair leaves sync, not a second later', async () => {
    const { supervisor, primary, follower, pair, advance } = setUp({ followerUp: true });
    pair().inSync = true;
    // The follower confirmed 500; the directory's floor says 400 (it is written at most once a second).
    expect(primary.status().followerAckedLsn).toBe('500');
    await supervisor.checkAll();
    expect(pair().ackedLsn).toBe(400n);
    follower.up = false;
    for (let round = 0; round < 5 && pair().inSync; round++) {
      advance(200);
      await supervisor.checkAll();
    }
    expect(pair().inSync).toBe(false);
    expect(pair().ackedLsn, 'a later supervisor must not keep a primary holding less than was acknowledged in sync').toBe(500n);
  });
});
