// Membership counters through a real cluster: a like counts once, an unlike
// undoes exactly one, concurrent flips of overlapping members leave a count
// equal to the members present, rebuild finds no drift on a healthy counter,
// and bad input changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { rejection } from '../helpers/rejection.ts';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';

describe('membership counters', () => {
  let tc: TestCluster;
  beforeAll(async () => {
    tc = await startCluster({ pairs: 2, routerArgs: ['--member-partitions', '8'] });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it('like, like again, unlike, unlike again: count 1, 1, 0, 0 and changed says which calls flipped', async () => {
    const { client } = tc;
    const steps = [
      await client.setMember('post:1', 42n, true),
      await client.setMember('post:1', 42n, true),
      await client.setMember('post:1', 42n, false),
      await client.setMember('post:1', 42n, false),
    ];
    expect(steps.map((step) => step.count)).toEqual([1n, 1n, 0n, 0n]);
    expect(steps.map((step) => step.changed)).toEqual([true, false, true, false]);
    expect((await client.read('post:1')).total).toBe(0n);
    const description = await client.describe('post:1');
    expect(description.kind).toBe('membership');
    expect(description.shards).toBe(8);
    expect(description.autoscale).toBe(false);
    expect(new Set(description.placements.map((placement) => placement.pair)).size).toBe(2);
  });

  it('ids across the whole 64-bit range are members exactly when set', async () => {
    const { client } = tc;
    const ids = [0n, 1n, 4_294_967_295n, 4_294_967_296n, 9_223_372_036_854_775_808n, 18_446_744_073_709_551_615n];
    for (const id of ids) expect((await client.setMember('wide', id, true)).changed).toBe(true);
    expect(await client.isMember('wide', [...ids, 2n, 18_446_744_073_709_551_614n])).toEqual([...ids.map(() => true), false, false]);
    expect((await client.read('wide')).total).toBe(BigInt(ids.length));
    // A counter never written has no members.
    expect(await client.isMember('nobody-liked-this', [1n, 2n])).toEqual([false, false]);
  });

  it('64 concurrent callers flipping overlapping members: count = changed likes - changed unlikes = members present', async () => {
    const { client } = tc;
    const memberCount = 40;
    let netFlips = 0n;
    const flipsByMember = new Map<number, number>();
    await Promise.all(
      Array.from({ length: 64 }, async (_, caller) => {
        for (let step = 0; step < 15; step++) {
          const member = (caller * 7 + step * 13) % memberCount;
          const present = (caller + step) % 3 !== 0;
          const { changed } = await client.setMember('hot-post', BigInt(member), present);
          if (changed) {
            netFlips += present ? 1n : -1n;
            flipsByMember.set(member, (flipsByMember.get(member) ?? 0) + (present ? 1 : -1));
          }
        }
      }),
    );
    const present = await client.isMember(
      'hot-post',
      Array.from({ length: memberCount }, (_, member) => BigInt(member)),
    );
    const presentCount = BigInt(present.filter(Boolean).length);
    expect((await client.read('hot-post')).total).toBe(presentCount);
    expect(netFlips).toBe(presentCount);
    // Per member, the acknowledged flips alternate: their sum is the member's final state.
    present.forEach((isPresent, member) => expect(flipsByMember.get(member) ?? 0).toBe(isPresent ? 1 : 0));
    const rebuilt = await client.rebuild('hot-post');
    expect(rebuilt.drift).toBe(0n);
    expect(rebuilt.members).toBe(presentCount);
    expect(rebuilt.storedCount).toBe(presentCount);
    expect(rebuilt.repaired).toBe(false);
    expect(rebuilt.partitions).toHaveLength(8);
  });

  it('bad input gets a clear status and changes nothing', async () => {
    const { client } = tc;
    await client.setMember('strict-likes', 7n, true);
    expect((await rejection(client.setMember('strict-likes', -1n, true))).grpcCode).toBe(status.INVALID_ARGUMENT);
    expect((await rejection(client.setMember('strict-likes', 18_446_744_073_709_551_616n, true))).grpcCode).toBe(status.INVALID_ARGUMENT);
    expect((await rejection(client.setMember('strict-likes', 'abc', true))).grpcCode).toBe(status.INVALID_ARGUMENT);
    expect((await rejection(client.setMember('strict-likes', 1.5, true))).grpcCode).toBe(status.INVALID_ARGUMENT);
    expect((await rejection(client.setMember('', 1n, true))).grpcCode).toBe(status.INVALID_ARGUMENT);
    expect((await rejection(client.isMember('strict-likes', []))).grpcCode).toBe(status.INVALID_ARGUMENT);
    expect((await rejection(client.rebuild('no-such-likes'))).grpcCode).toBe(status.NOT_FOUND);
    // Kinds do not mix.
    await client.increment('plain', 5);
    expect((await rejection(client.setMember('plain', 1n, true))).grpcCode).toBe(status.FAILED_PRECONDITION);
    expect((await rejection(client.isMember('plain', [1n]))).grpcCode).toBe(status.FAILED_PRECONDITION);
    expect((await rejection(client.rebuild('plain'))).grpcCode).toBe(status.FAILED_PRECONDITION);
    expect((await rejection(client.increment('strict-likes', 1))).grpcCode).toBe(status.FAILED_PRECONDITION);
    expect((await rejection(client.setShards('strict-likes', 16))).grpcCode).toBe(status.FAILED_PRECONDITION);
    expect((await rejection(client.configure('strict-likes', { autoscale: true }))).grpcCode).toBe(status.FAILED_PRECONDITION);
    expect((await rejection(client.configure('strict-likes', { membershipPartitions: 4 }))).grpcCode).toBe(status.FAILED_PRECONDITION);
    expect((await rejection(client.configure('plain', { membershipPartitions: 4 }))).grpcCode).toBe(status.FAILED_PRECONDITION);
    expect((await client.read('strict-likes')).total).toBe(1n);
    expect((await client.read('plain')).total).toBe(5n);
    expect(await client.isMember('strict-likes', [7n])).toEqual([true]);
  });

  it('configure creates a counter with a chosen partition count, fixed for life', async () => {
    const { client } = tc;
    const created = await client.configure('votes', { membershipPartitions: 3 });
    expect([created.kind, created.shards]).toEqual(['membership', 3]);
    // Asking again for the same count is a no-op.
    expect((await client.configure('votes', { membershipPartitions: 3 })).shards).toBe(3);
    for (let member = 0n; member < 30n; member++) await client.setMember('votes', member, true);
    expect((await client.read('votes')).total).toBe(30n);
    expect((await client.rebuild('votes')).drift).toBe(0n);
  });
});
