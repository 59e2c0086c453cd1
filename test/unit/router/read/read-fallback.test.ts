// A pair's shards are read from its primary, or from its follower only while
// the directory knows the pair in sync and the follower answers as that same
// log, as the follower of the recorded epoch. Anything else fails
// UNAVAILABLE: a node answering as primary of a later epoch may have been
// deposed since by a failover it has not heard of, without what its
// successor acknowledged (a nemesis soak read such a node 288 short).
import { describe, expect, it } from 'vitest';
import { readPairWithFallback, type NodeReadMeta } from '../../../../src/router/read/exact-reader.ts';
import type { PairInfo } from '../../../../src/router/directory/index.ts';
import { ErrorCode, TallyError } from '../../../../src/wire/index.ts';

const pair = {
  pairIndex: 1,
  primary: 'p:1',
  follower: 'f:1',
  epoch: 1n,
  inSync: true,
  primaryId: 'log-p',
  followerId: 'log-f',
} as PairInfo;

function reader(followerAnswer: NodeReadMeta) {
  return async (address: string): Promise<NodeReadMeta> => {
    if (address === pair.primary) throw new Error('connection refused');
    return followerAnswer;
  };
}

async function outcome(state: Partial<PairInfo>, followerAnswer: NodeReadMeta): Promise<string> {
  try {
    const read = await readPairWithFallback({ ...pair, ...state }, reader(followerAnswer));
    return read.fromFollower ? 'follower' : 'primary';
  } catch (error) {
    expect(error).toBeInstanceOf(TallyError);
    expect((error as TallyError).code).toBe(ErrorCode.unavailable);
    return 'unavailable';
  }
}

describe('read fallback', () => {
  it('the in-sync follower of the recorded epoch stands in for an unreachable primary', async () => {
    expect(await outcome({}, { role: 'follower', epoch: '1', nodeId: 'log-f', lsn: '5' })).toBe('follower');
  });

  it('the same log answering as primary of a later epoch is refused: it may be deposed since, behind its successor', async () => {
    expect(await outcome({}, { role: 'primary', epoch: '2', nodeId: 'log-f', lsn: '5' })).toBe('unavailable');
  });

  it('a follower not known in sync, another log at the address, or an older or unchanged epoch as primary is refused', async () => {
    expect(await outcome({ inSync: false }, { role: 'follower', epoch: '1', nodeId: 'log-f', lsn: '5' })).toBe('unavailable');
    expect(await outcome({}, { role: 'primary', epoch: '2', nodeId: 'log-wiped', lsn: '0' })).toBe('unavailable');
    expect(await outcome({}, { role: 'primary', epoch: '1', nodeId: 'log-f', lsn: '5' })).toBe('unavailable');
    expect(await outcome({ epoch: 3n }, { role: 'primary', epoch: '2', nodeId: 'log-f', lsn: '5' })).toBe('unavailable');
    expect(await outcome({}, { role: 'follower', epoch: '2', nodeId: 'log-f', lsn: '5' })).toBe('unavailable');
    expect(await outcome({ followerId: '' }, { role: 'primary', epoch: '2', nodeId: 'log-f', lsn: '5' })).toBe('unavailable');
  });
});
