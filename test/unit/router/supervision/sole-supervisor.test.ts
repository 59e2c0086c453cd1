// The embedded directory's supervisor: one router, always the supervisor
// until it stops (the etcd election is tested on a real etcd in
// test/integration/supervisor-election.test.ts).
import { describe, expect, it } from 'vitest';
import { SoleSupervisor } from '../../../../src/router/supervision/supervisor-election.ts';

describe('sole supervisor', () => {
  it('leads from construction and names itself, before and after start()', async () => {
    const election = new SoleSupervisor('127.0.0.1:50051#7');
    expect({ leader: election.isLeader, leaderId: election.leaderId }).toEqual({ leader: true, leaderId: '127.0.0.1:50051#7' });
    await election.start();
    expect({ leader: election.isLeader, leaderId: election.leaderId }).toEqual({ leader: true, leaderId: '127.0.0.1:50051#7' });
  });

  it('stop() ends supervision and tells every listener once', async () => {
    const election = new SoleSupervisor('router');
    const heard: boolean[][] = [[], []];
    election.onChange((leader) => heard[0]!.push(leader));
    election.onChange((leader) => heard[1]!.push(leader));
    await election.start();
    await election.stop();
    await election.stop();
    expect(heard).toEqual([[false], [false]]);
    expect({ leader: election.isLeader, leaderId: election.leaderId }).toEqual({ leader: false, leaderId: undefined });
  });
});
