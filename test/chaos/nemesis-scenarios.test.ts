// Targeted nemesis scenarios (G1, G2, G3, G9 under G11's faults): one fault
// step each on a shared namespaced cluster, judged by the history checker.
// The seeded random schedules are in nemesis.test.ts (run beside this file).
import { describe, it } from 'vitest';
import { pairMembers, shortTimeouts, supervisorName } from '../helpers/nemesis/index.ts';
import { nemesisSuite, scenario } from '../helpers/nemesis/suite.ts';

// Short leases and timeouts, so a fault outlasts them within seconds.
const { leaseMs, routerArgs, nodeArgs } = shortTimeouts;
// A seed to rerun names a random schedule of nemesis.test.ts: these scenarios stand aside.

describe.skipIf(process.env.TALLY_NEMESIS_SEED !== undefined)('chaos: nemesis scenarios', () => {
  const suite = nemesisSuite({ routerArgs, nodeArgs }, 'test/chaos/nemesis-scenarios.test.ts');

  it('a router cut from one primary: totals exact through both routers', async () => {
    const schedule = scenario('router cut from primary', 101, {
      faults: [async (c) => ({ kind: 'partition', sides: [['r1'], [(await pairMembers(c, 0)).primary]], mode: 'drop' })],
      holdMs: 4_000,
      gapMs: 1_500,
    });
    suite.expectSafe(await suite.run(schedule));
  }, 60_000);

  it('a primary cut from its follower, then killed: nothing acknowledged is lost', async () => {
    let members: { primary: string; follower: string } | undefined;
    const schedule = scenario('primary cut then killed', 102, {
      faults: [
        async (c) => {
          members = await pairMembers(c, 0);
          return { kind: 'partition', sides: [[members.primary], [members.follower]], mode: 'drop' };
        },
        async () => ({ kind: 'kill', process: members!.primary }),
      ],
      staggerMs: 1_500,
      holdMs: 3_000,
      gapMs: 1_500,
    });
    suite.expectSafe(await suite.run(schedule));
  }, 60_000);

  it('the supervisor router paused past its lease, then resumed: its late orders change nothing', async () => {
    const schedule = scenario('supervisor paused', 103, {
      faults: [async (c) => ({ kind: 'pause', process: await supervisorName(c) })],
      holdMs: leaseMs + 2_000,
      gapMs: 1_500,
    });
    suite.expectSafe(await suite.run(schedule));
  }, 60_000);

  it('the supervising router cut from every etcd member: another takes over, totals exact', async () => {
    const schedule = scenario('supervisor cut from etcd', 104, {
      faults: [async (c) => ({ kind: 'partition', sides: [[await supervisorName(c)], ['e1', 'e2', 'e3']], mode: 'drop' })],
      holdMs: leaseMs + 2_000,
      gapMs: 1_500,
    });
    suite.expectSafe(await suite.run(schedule));
  }, 60_000);

  it("a torn write on one pair's primary and a corrupted page on the other pair's follower: both refused, refilled, nothing lost", async () => {
    const schedule = scenario('torn and corrupt logs', 106, {
      faults: [
        async (c) => ({ kind: 'torn-write', process: (await pairMembers(c, 0)).primary }),
        async (c) => ({ kind: 'corrupt-page', process: (await pairMembers(c, 1)).follower, seed: 106 }),
      ],
      staggerMs: 1_000,
      holdMs: 2_500,
      gapMs: 1_500,
    });
    suite.expectSafe(await suite.run(schedule));
  }, 60_000);

  it("a primary killed between a write-ahead frame's header and its page, and a stored value moved on the other pair's follower: the first serves its own log, the second is refused and refilled, nothing lost", async () => {
    const schedule = scenario('mid-frame kill and a moved value', 107, {
      faults: [
        async (c) => ({ kind: 'mid-frame-kill', process: (await pairMembers(c, 0)).primary }),
        async (c) => ({ kind: 'flipped-value', process: (await pairMembers(c, 1)).follower }),
      ],
      staggerMs: 1_000,
      holdMs: 2_500,
      gapMs: 1_500,
    });
    suite.expectSafe(await suite.run(schedule));
  }, 60_000);

  it('one way: a primary hears everyone, nobody hears it', async () => {
    const schedule = scenario('one-way from primary', 105, {
      faults: [
        async (c) => {
          const { primary, follower } = await pairMembers(c, 1);
          return { kind: 'partition-one-way', from: [primary], to: [follower, 'r1', 'r2'], mode: 'drop' };
        },
      ],
      holdMs: 3_000,
      gapMs: 1_500,
    });
    suite.expectSafe(await suite.run(schedule));
  }, 60_000);

  suite.compareLogsAfterwards();
});
