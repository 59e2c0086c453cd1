// Every supervisor decision, table-driven: node identity, lsn, role and
// epoch in, action out. The rules that keep G1 through a lost disk: a node
// is made primary or promoted only when it is the recorded log and holds
// what was acknowledged; a new log in either slot is a follower to fill.
import { describe, expect, it } from 'vitest';
import { decidePair, type NodeStatusView, type NodeView, type PairAction } from '../../../../src/router/supervision/pair-decision.ts';
import type { PairInfo } from '../../../../src/router/directory/contract.ts';

const settings = { failoverTimeoutMs: 2_000, followerTimeoutMs: 1_000 };
const P = '127.0.0.1:1';
const F = '127.0.0.1:2';

function pair(overrides: Partial<PairInfo> = {}): PairInfo {
  return {
    pairIndex: 0,
    primary: P,
    follower: F,
    epoch: 3n,
    inSync: true,
    primaryId: 'log-p',
    followerId: 'log-f',
    ackedLsn: 100n,
    legacy: false,
    replaced: false,
    addedOnline: false,
    draining: false,
    configVersion: 7n,
    advertised: {},
    ...overrides,
  };
}

function primaryStatus(overrides: Partial<NodeStatusView> = {}): NodeStatusView {
  return {
    nodeId: 'log-p',
    role: 'primary',
    epoch: 3n,
    lastLsn: 120n,
    peer: F,
    syncRequired: true,
    installing: false,
    followerId: 'log-f',
    followerAckedLsn: 120n,
    followerCaughtUp: true,
    replicationLagMs: 0,
    configVersion: 0n,
    followerLostEntries: false,
    followerAhead: false,
    zone: '',
    replicationAddress: '',
    ...overrides,
  };
}

function followerStatus(overrides: Partial<NodeStatusView> = {}): NodeStatusView {
  return {
    nodeId: 'log-f',
    role: 'follower',
    epoch: 3n,
    lastLsn: 120n,
    peer: P,
    syncRequired: false,
    installing: false,
    followerId: '',
    followerAckedLsn: 0n,
    followerCaughtUp: false,
    replicationLagMs: 0,
    configVersion: 0n,
    followerLostEntries: false,
    followerAhead: false,
    zone: '',
    replicationAddress: '',
    ...overrides,
  };
}

const up = (status: NodeStatusView): NodeView => ({ status, refused: false, silentMs: 0 });
const refused: NodeView = { status: undefined, refused: true, silentMs: 10 };
const silent = (silentMs: number): NodeView => ({ status: undefined, refused: false, silentMs });

function kinds(actions: PairAction[]): string[] {
  return actions.map((action) => action.kind);
}

interface Case {
  name: string;
  pair: PairInfo;
  primary: NodeView;
  follower: NodeView;
  expected: string[];
}

const cases: Case[] = [
  {
    name: 'healthy in-sync pair: nothing to do',
    pair: pair({ ackedLsn: 120n }),
    primary: up(primaryStatus()),
    follower: up(followerStatus()),
    expected: [],
  },
  {
    name: 'in sync, follower confirmed more: record the acknowledged lsn',
    pair: pair({ ackedLsn: 50n }),
    primary: up(primaryStatus()),
    follower: up(followerStatus()),
    expected: ['record'],
  },
  // Dead or silent primary.
  {
    name: 'primary refused, in-sync recorded follower holds the history: fail over at once',
    pair: pair(),
    primary: refused,
    follower: up(followerStatus()),
    expected: ['failover'],
  },
  {
    name: 'primary silent (paused) under the timeout: wait',
    pair: pair(),
    primary: silent(1_500),
    follower: up(followerStatus()),
    expected: [],
  },
  {
    name: 'primary silent past the timeout: fail over',
    pair: pair(),
    primary: silent(2_000),
    follower: up(followerStatus()),
    expected: ['failover'],
  },
  {
    name: 'primary refused, pair out of sync: a stale follower is never promoted',
    pair: pair({ inSync: false }),
    primary: refused,
    follower: up(followerStatus()),
    expected: [],
  },
  {
    name: 'primary refused, follower slot holds a new (empty) log: never promoted',
    pair: pair(),
    primary: refused,
    follower: up(followerStatus({ nodeId: 'log-new', lastLsn: 0n, epoch: 0n, role: 'unassigned' })),
    expected: [],
  },
  {
    name: 'primary refused, recorded follower but its log ends before the acknowledged lsn: never promoted',
    pair: pair(),
    primary: refused,
    follower: up(followerStatus({ lastLsn: 99n })),
    expected: [],
  },
  {
    name: 'primary refused, follower at another epoch: never promoted',
    pair: pair(),
    primary: refused,
    follower: up(followerStatus({ epoch: 2n })),
    expected: [],
  },
  {
    name: 'primary refused, follower still installing a snapshot: never promoted',
    pair: pair(),
    primary: refused,
    follower: up(followerStatus({ installing: true })),
    expected: [],
  },
  { name: 'both down: nothing', pair: pair(), primary: refused, follower: refused, expected: [] },
  // A lost disk in the primary slot.
  {
    name: 'primary slot answers with a new identity (wiped disk), in-sync follower: fail over to the follower',
    pair: pair(),
    primary: up(primaryStatus({ nodeId: 'log-wiped', role: 'unassigned', epoch: 0n, lastLsn: 0n, followerId: '' })),
    follower: up(followerStatus()),
    expected: ['failover'],
  },
  {
    name: 'primary slot answers with a new identity, follower out of sync: stuck (UNAVAILABLE), never made primary',
    pair: pair({ inSync: false }),
    primary: up(primaryStatus({ nodeId: 'log-wiped', role: 'unassigned', epoch: 0n, lastLsn: 0n })),
    follower: up(followerStatus()),
    expected: ['stuck'],
  },
  {
    name: 'recorded primary whose log ends before the acknowledged lsn, in-sync follower: fail over',
    pair: pair({ ackedLsn: 200n }),
    primary: up(primaryStatus({ lastLsn: 150n })),
    follower: up(followerStatus({ lastLsn: 200n })),
    expected: ['failover'],
  },
  {
    name: 'recorded primary restarted (role kept, same log): told again only what differs',
    pair: pair({ inSync: false }),
    primary: up(primaryStatus({ syncRequired: true })),
    follower: up(followerStatus()),
    expected: ['assignPrimary', 'markInSync'],
  },
  {
    // The node refuses to drop sync under the version it took it in: asking failed every round, before markInSync (nemesis seed 1).
    name: 'out of sync, primary requires its caught-up follower under the directory version (in-sync write lost): mark in sync',
    pair: pair({ inSync: false }),
    primary: up(primaryStatus({ syncRequired: true, configVersion: 7n })),
    follower: up(followerStatus({ configVersion: 5n })),
    expected: ['markInSync'],
  },
  {
    name: 'out of sync, primary requires its follower under the directory version, follower silent: out of sync again (a newer version)',
    pair: pair({ inSync: false }),
    primary: up(primaryStatus({ syncRequired: true, configVersion: 7n, followerCaughtUp: false })),
    follower: silent(5_000),
    expected: ['markOutOfSync'],
  },
  {
    name: 'out of sync, primary requires its follower under the directory version, follower still installing: out of sync again',
    pair: pair({ inSync: false }),
    primary: up(primaryStatus({ syncRequired: true, configVersion: 7n, followerCaughtUp: false })),
    follower: up(followerStatus({ installing: true, lastLsn: 0n })),
    expected: ['markOutOfSync'],
  },
  {
    name: 'recorded primary that restarted unassigned: made primary again',
    pair: pair({ inSync: false }),
    primary: up(primaryStatus({ role: 'unassigned', epoch: 0n, syncRequired: false, followerCaughtUp: false })),
    follower: up(followerStatus()),
    expected: ['assignPrimary'],
  },
  {
    name: 'node at a newer epoch than the directory: stuck',
    pair: pair(),
    primary: up(primaryStatus({ epoch: 4n })),
    follower: up(followerStatus()),
    expected: ['stuck'],
  },
  {
    name: 'directory in sync but the primary is not requiring its follower: out of sync first',
    pair: pair(),
    primary: up(primaryStatus({ syncRequired: false })),
    follower: up(followerStatus()),
    expected: ['markOutOfSync'],
  },
  // First sight and legacy directories.
  {
    name: 'a new pair (nothing ever written): the primary slot is adopted and assigned, the follower recorded',
    pair: pair({ primaryId: '', followerId: '', ackedLsn: 0n, inSync: false, epoch: 1n }),
    primary: up(
      primaryStatus({
        nodeId: 'log-a',
        role: 'unassigned',
        epoch: 0n,
        lastLsn: 0n,
        followerId: '',
        followerCaughtUp: false,
        syncRequired: false,
        peer: '',
      }),
    ),
    follower: up(followerStatus({ nodeId: 'log-b', role: 'unassigned', epoch: 0n, lastLsn: 0n, peer: '' })),
    expected: ['record', 'assignPrimary', 'record', 'assignFollower'],
  },
  {
    name: 'a legacy pair: the node answering as primary of this epoch is adopted',
    pair: pair({ primaryId: '', followerId: '', ackedLsn: 0n, legacy: true }),
    primary: up(primaryStatus({ nodeId: 'log-old', followerId: 'log-old-f' })),
    follower: up(followerStatus({ nodeId: 'log-old-f' })),
    expected: ['record', 'record'],
  },
  {
    name: 'a legacy in-sync pair whose primary confirms another follower log than the one answering: out of sync',
    pair: pair({ primaryId: '', followerId: '', ackedLsn: 0n, legacy: true }),
    primary: up(primaryStatus({ nodeId: 'log-old', followerId: 'log-gone' })),
    follower: up(followerStatus({ nodeId: 'log-old-f' })),
    expected: ['record', 'markOutOfSync'],
  },
  {
    name: 'a legacy pair whose primary slot came back unassigned (wiped): not adopted',
    pair: pair({ primaryId: '', followerId: '', ackedLsn: 0n, legacy: true, inSync: false }),
    primary: up(primaryStatus({ nodeId: 'log-wiped', role: 'unassigned', epoch: 0n, lastLsn: 0n })),
    follower: up(followerStatus({ nodeId: 'log-old-f' })),
    expected: ['stuck'],
  },
  {
    name: 'a legacy pair whose failover was written but never told: the follower of the previous epoch in the primary slot is adopted and made primary',
    pair: pair({ primaryId: '', followerId: '', ackedLsn: 0n, legacy: true, inSync: false, epoch: 4n }),
    primary: up(primaryStatus({ nodeId: 'log-was-f', role: 'follower', epoch: 3n, syncRequired: false, followerCaughtUp: false })),
    follower: refused,
    expected: ['record', 'assignPrimary'],
  },
  {
    name: 'a legacy in-sync pair with its primary down: the follower of this epoch is recorded, so it can take over next',
    pair: pair({ primaryId: '', followerId: '', ackedLsn: 0n, legacy: true }),
    primary: refused,
    follower: up(followerStatus({ nodeId: 'log-old-f' })),
    expected: ['record'],
  },
  // The follower slot.
  {
    name: 'follower refused while in sync: out of sync at once',
    pair: pair(),
    primary: up(primaryStatus()),
    follower: refused,
    expected: ['markOutOfSync'],
  },
  { name: 'follower silent under its timeout: wait', pair: pair(), primary: up(primaryStatus()), follower: silent(500), expected: [] },
  {
    name: 'follower silent past its timeout: out of sync',
    pair: pair(),
    primary: up(primaryStatus()),
    follower: silent(1_000),
    expected: ['markOutOfSync'],
  },
  {
    name: 'follower lagging past its timeout: out of sync',
    pair: pair(),
    primary: up(primaryStatus({ replicationLagMs: 1_500 })),
    follower: up(followerStatus()),
    expected: ['markOutOfSync'],
  },
  {
    name: 'follower came back with a new identity while in sync: out of sync (recording it) and assigned to be filled',
    pair: pair(),
    primary: up(primaryStatus({ followerId: 'log-f' })),
    follower: up(followerStatus({ nodeId: 'log-new', role: 'unassigned', epoch: 0n, lastLsn: 0n, peer: '' })),
    expected: ['markOutOfSync', 'assignFollower'],
  },
  {
    name: 'out of sync: the primary says caught up, but about another follower log: not in sync',
    pair: pair({ inSync: false }),
    primary: up(primaryStatus({ syncRequired: false, followerId: 'log-other' })),
    follower: up(followerStatus()),
    expected: [],
  },
  {
    name: 'out of sync: caught up about the recorded follower: in sync',
    pair: pair({ inSync: false }),
    primary: up(primaryStatus({ syncRequired: false })),
    follower: up(followerStatus()),
    expected: ['markInSync'],
  },
  {
    // Under steady load a commit is always in flight: exactly caught up is rarely what a status shows (nemesis, CI).
    name: 'out of sync: the follower streams a few entries behind its primary under load: in sync (SetRole waits for the rest)',
    pair: pair({ inSync: false }),
    primary: up(primaryStatus({ syncRequired: false, followerCaughtUp: false, followerAckedLsn: 117n, replicationLagMs: 3 })),
    follower: up(followerStatus({ lastLsn: 117n })),
    expected: ['markInSync'],
  },
  {
    // A follower catching up under steady load streams at about the rate its primary writes: it
    // trailed by several shipments for good, and the pair never rejoined (chaos: back in sync under load).
    name: 'out of sync: the follower streams several shipments behind within the follower timeout: in sync (SetRole waits for the rest)',
    pair: pair({ inSync: false }),
    primary: up(
      primaryStatus({ syncRequired: false, followerCaughtUp: false, lastLsn: 30_000n, followerAckedLsn: 120n, replicationLagMs: 700 }),
    ),
    follower: up(followerStatus({ lastLsn: 120n })),
    expected: ['markInSync'],
  },
  {
    name: 'out of sync: the follower is further behind than its primary ships from memory: not yet',
    pair: pair({ inSync: false }),
    primary: up(
      primaryStatus({ syncRequired: false, followerCaughtUp: false, lastLsn: 60_200n, followerAckedLsn: 120n, replicationLagMs: 40 }),
    ),
    follower: up(followerStatus({ lastLsn: 120n })),
    expected: [],
  },
  {
    name: 'out of sync: a few entries behind but its oldest unconfirmed commit older than the follower timeout: not yet',
    pair: pair({ inSync: false }),
    primary: up(primaryStatus({ syncRequired: false, followerCaughtUp: false, followerAckedLsn: 117n, replicationLagMs: 1_500 })),
    follower: up(followerStatus({ lastLsn: 117n })),
    expected: [],
  },
  {
    name: 'out of sync: the primary never heard from this follower in this session (acked 0): not yet',
    pair: pair({ inSync: false, ackedLsn: 0n }),
    primary: up(primaryStatus({ syncRequired: false, followerCaughtUp: false, lastLsn: 10n, followerAckedLsn: 0n })),
    follower: up(followerStatus({ lastLsn: 10n })),
    expected: [],
  },
  {
    name: 'out of sync, primary requires its follower under the directory version, follower a few entries behind under load: mark in sync',
    pair: pair({ inSync: false }),
    primary: up(
      primaryStatus({ syncRequired: true, configVersion: 7n, followerCaughtUp: false, followerAckedLsn: 118n, replicationLagMs: 2 }),
    ),
    follower: up(followerStatus({ configVersion: 5n, lastLsn: 118n })),
    expected: ['markInSync'],
  },
  {
    name: 'out of sync: follower still installing a snapshot: not in sync',
    pair: pair({ inSync: false }),
    primary: up(primaryStatus({ syncRequired: false })),
    follower: up(followerStatus({ installing: true })),
    expected: [],
  },
  {
    name: 'deposed primary back in the follower slot at an old epoch: told to follow',
    pair: pair({ inSync: false }),
    primary: up(primaryStatus({ syncRequired: false, followerCaughtUp: false })),
    follower: up(followerStatus({ role: 'primary', epoch: 2n })),
    expected: ['assignFollower'],
  },
];

describe('supervisor decisions', () => {
  for (const testCase of cases) {
    it(`pair decision: ${testCase.name}`, () => {
      expect(kinds(decidePair(testCase.pair, testCase.primary, testCase.follower, settings))).toEqual(testCase.expected);
    });
  }

  it('pair decision: a failover records the wiped primary slot as the follower to fill, by its new identity', () => {
    const actions = decidePair(
      pair(),
      up(primaryStatus({ nodeId: 'log-wiped', role: 'unassigned', epoch: 0n, lastLsn: 0n })),
      up(followerStatus()),
      settings,
    );
    expect(actions).toEqual([expect.objectContaining({ kind: 'failover', deposedId: 'log-wiped' })]);
  });

  it('pair decision: a new follower identity is recorded in the same step that takes the pair out of sync', () => {
    const actions = decidePair(pair(), up(primaryStatus()), up(followerStatus({ nodeId: 'log-new', lastLsn: 0n })), settings);
    expect(actions[0]).toEqual({ kind: 'markOutOfSync', reason: expect.stringContaining('log-new'), update: { followerId: 'log-new' } });
  });

  it('pair decision: a node that obeyed a newer configuration version than the directory holds: the directory issues one above it first, and nothing else this round', () => {
    const decide = (primary: NodeView, follower: NodeView) => decidePair(pair({ ackedLsn: 50n }), primary, follower, settings);
    expect(decide(up(primaryStatus({ configVersion: 9n })), up(followerStatus({ configVersion: 12n })))).toEqual([
      { kind: 'record', update: { configVersionAbove: 12n }, reason: expect.stringMatching(/version 12, above the directory's 7/) },
    ]);
    expect(kinds(decide(up(primaryStatus({ configVersion: 7n })), up(followerStatus({ configVersion: 6n }))))).toEqual(['record']);
    expect(decide(up(primaryStatus({ configVersion: 7n })), up(followerStatus()))[0]).toMatchObject({
      reason: 'acknowledged lsn advanced',
    });
  });

  it('pair decision: a follower holding less than it had confirmed (an old copy of its disk) takes the pair out of sync, and is not promoted while it holds less than the primary last reported confirmed', () => {
    const lost = decidePair(
      pair({ ackedLsn: 50n }),
      up(primaryStatus({ followerLostEntries: true, followerAckedLsn: 90n })),
      up(followerStatus({ lastLsn: 90n })),
      settings,
    );
    expect(lost[0]).toMatchObject({ kind: 'markOutOfSync', reason: expect.stringContaining('old copy') });
    // The primary died before the directory recorded more than 50; it had reported 120 confirmed.
    expect(kinds(decidePair(pair({ ackedLsn: 50n }), refused, up(followerStatus({ lastLsn: 90n })), settings, 120n))).toEqual([]);
    expect(kinds(decidePair(pair({ ackedLsn: 50n }), refused, up(followerStatus({ lastLsn: 120n })), settings, 120n))).toEqual([
      'failover',
    ]);
  });

  it('pair decision: a primary whose follower holds more of its own epoch (an old copy of its disk, the directory floor stale and nothing seen since) is failed over to that follower in sync, and is not kept out of sync', () => {
    // The directory's floor (50) and this supervisor's memory (nothing seen) both say the primary's 100 is enough.
    const behind = up(primaryStatus({ lastLsn: 100n, followerAhead: true, followerAckedLsn: 0n, followerCaughtUp: false }));
    expect(decidePair(pair({ ackedLsn: 50n }), behind, up(followerStatus({ lastLsn: 120n })), settings)[0]).toMatchObject({
      kind: 'failover',
      reason: expect.stringContaining('before its follower'),
    });
    expect(kinds(decidePair(pair({ ackedLsn: 50n, inSync: false }), behind, up(followerStatus({ lastLsn: 120n })), settings))).toEqual([
      'stuck',
    ]);
    // Without the report it would be kept.
    expect(
      kinds(decidePair(pair({ ackedLsn: 50n }), up(primaryStatus({ lastLsn: 100n })), up(followerStatus({ lastLsn: 120n })), settings)),
    ).not.toContain('failover');
  });

  it('pair decision: a primary back with less than it last reported its follower confirmed (a torn log) is failed over to the follower that holds it', () => {
    const actions = decidePair(
      pair({ ackedLsn: 50n }),
      up(primaryStatus({ lastLsn: 100n })),
      up(followerStatus({ lastLsn: 120n })),
      settings,
      120n,
    );
    expect(actions).toEqual([
      expect.objectContaining({ kind: 'failover', reason: expect.stringContaining('before the acknowledged 120') }),
    ]);
  });

  it('pair decision: what a node advertises (zone, replication address) is recorded first, and only while the primary answers', () => {
    const actions = decidePair(
      pair(),
      up(primaryStatus({ zone: 'z1' })),
      up(followerStatus({ zone: 'z2', replicationAddress: '10.9.0.2:7' })),
      settings,
    );
    expect(actions).toEqual([
      {
        kind: 'record',
        update: { advertised: { [P]: { zone: 'z1', replicationAddress: '' }, [F]: { zone: 'z2', replicationAddress: '10.9.0.2:7' } } },
        reason: expect.stringContaining('advertises'),
      },
    ]);
    // Recorded already: nothing more to do.
    const recorded = pair({
      ackedLsn: 120n,
      advertised: { [P]: { zone: 'z1', replicationAddress: '' }, [F]: { zone: 'z2', replicationAddress: '' } },
    });
    expect(decidePair(recorded, up(primaryStatus({ zone: 'z1' })), up(followerStatus({ zone: 'z2' })), settings)).toEqual([]);
    // A silent primary: the failover comes first, the follower's news waits.
    const silent: NodeView = { status: undefined, refused: true, silentMs: 0 };
    expect(decidePair(pair(), silent, up(followerStatus({ zone: 'z2' })), settings).map((action) => action.kind)).toEqual(['failover']);
  });

  it("pair decision: a primary replicating to its follower's router address while the follower advertises another is told the advertised one", () => {
    const advertised = { [F]: { zone: '', replicationAddress: '10.9.0.2:7' } };
    const actions = decidePair(
      pair({ ackedLsn: 120n, advertised }),
      up(primaryStatus({ peer: F })),
      up(followerStatus({ replicationAddress: '10.9.0.2:7' })),
      settings,
    );
    expect(actions).toEqual([{ kind: 'assignPrimary', syncRequired: true }]);
    expect(
      decidePair(
        pair({ ackedLsn: 120n, advertised }),
        up(primaryStatus({ peer: '10.9.0.2:7' })),
        up(followerStatus({ replicationAddress: '10.9.0.2:7' })),
        settings,
      ),
    ).toEqual([]);
  });
});
