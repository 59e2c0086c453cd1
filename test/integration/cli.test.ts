// The tally CLI against a started cluster: spawned with node directly, its
// stdout parsed, its errors one line with a non-zero exit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tally } from '../helpers/cli.ts';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';

describe('tally CLI', () => {
  let tc: TestCluster;
  let router: string[];
  beforeAll(async () => {
    tc = await startCluster({ pairs: 2 });
    router = ['--router', tc.cluster.routerAddress];
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it('incr, get and describe work and print readable lines', async () => {
    expect((await tally(['incr', 'cli:likes', '5', ...router])).code).toBe(0);
    const negative = await tally(['incr', 'cli:likes', '-2', ...router]);
    expect(negative.code).toBe(0);
    expect(negative.stdout).toMatch(/applied: cli:likes -2 on shard 0/);
    // "--" ends the flags, as docs/operations.md shows for negative amounts.
    expect((await tally([...router, 'incr', 'cli:likes', '--', '-1'])).stdout).toMatch(/applied: cli:likes -1/);
    expect((await tally(['incr', 'cli:likes', '1', ...router])).code).toBe(0);
    const get = await tally(['get', 'cli:likes', ...router]);
    expect(get.code).toBe(0);
    expect(get.stdout.trim()).toBe('cli:likes = 3 (exact, 1 shard)');
    const cached = await tally(['get', 'cli:likes', '--cached', ...router]);
    expect(cached.stdout).toMatch(/^cli:likes = 3 \(cached, \d+ ms old, 1 shard\)/);
    expect((await tally(['set-shards', 'cli:likes', '3', ...router])).stdout.trim()).toBe('cli:likes: 1 -> 3 shards');
    const describeOut = await tally(['describe', 'cli:likes', ...router]);
    expect(describeOut.code).toBe(0);
    expect(describeOut.stdout.split('\n')[0]).toMatch(/^cli:likes: 3 shards, heat [\d.]+ increments\/s/);
    expect(describeOut.stdout.match(/^ {2}shard \d/gm)).toHaveLength(3);
  });

  it('--json output parses and carries exact int64 totals; TALLY_ROUTER sets the router', async () => {
    await tally(['incr', 'cli:big', '9223372036854775000', ...router]);
    const get = await tally(['get', 'cli:big', '--json'], { TALLY_ROUTER: tc.cluster.routerAddress });
    expect(get.code).toBe(0);
    expect(JSON.parse(get.stdout)).toMatchObject({ counter: 'cli:big', total: '9223372036854775000', exact: true });
    const many = await tally(['get-many', 'cli:big', 'cli:none', '--json', ...router]);
    expect(JSON.parse(many.stdout).map((read: { total: string }) => read.total)).toEqual(['9223372036854775000', '0']);
    const status = await tally(['status', '--json', ...router]);
    const nodes = JSON.parse(status.stdout).nodes as { health: string; role: string; pid: number }[];
    expect(nodes).toHaveLength(4);
    expect(nodes.every((node) => node.health === 'SERVING' && node.pid > 0)).toBe(true);
    expect(nodes.map((node) => node.role)).toEqual(['primary', 'follower', 'primary', 'follower']);
  });

  it('incr --key applies once; reconcile reports zero drift; status shows epochs and sync', async () => {
    const first = await tally(['incr', 'cli:keyed', '4', '--key', 'order-1', ...router]);
    expect(first.stdout).toMatch(/^applied: cli:keyed \+4/);
    const again = await tally(['incr', 'cli:keyed', '4', '--key', 'order-1', ...router]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^duplicate \(not applied again\)/);
    expect((await tally(['get', 'cli:keyed', ...router])).stdout).toMatch(/^cli:keyed = 4 /);
    const reconcile = await tally(['reconcile', ...router]);
    expect(reconcile.code).toBe(0);
    expect(reconcile.stdout).toMatch(/^\d+ shards? checked, 0 drifting/);
    const status = await tally(['status', ...router]);
    expect(status.stdout).toMatch(/pair 0 {2}primary .* epoch \d+/);
  });

  it('distinct add then count reports the members added and the estimate with its error', async () => {
    const add = await tally(['distinct', 'add', 'cli:visitors', 'ann', 'bob', 'cy', ...router]);
    expect(add.code).toBe(0);
    expect(add.stdout.trim()).toMatch(/^cli:visitors: \d+ registers? changed \(3 members given\)$/);
    // Adding a member again changes nothing.
    expect((await tally(['distinct', 'add', 'cli:visitors', 'bob', ...router])).stdout.trim()).toBe(
      'cli:visitors: 0 registers changed (1 member given)',
    );
    const count = await tally(['distinct', 'count', 'cli:visitors', ...router]);
    expect(count.code).toBe(0);
    expect(count.stdout.trim()).toMatch(/^cli:visitors: 3 distinct ± 0\.\d\d% \(1 shard\)$/);
    await tally(['distinct', 'add', 'cli:visitors-2', 'cy', 'dee', ...router]);
    const union = await tally(['distinct', 'count', 'cli:visitors', 'cli:visitors-2', '--json', ...router]);
    expect(JSON.parse(union.stdout)).toMatchObject({ counters: ['cli:visitors', 'cli:visitors-2'], estimate: 4 });
  });

  it('configure a window, incr, get --last sums the buckets; beyond retention is one line naming it', async () => {
    // Minute buckets: a loaded machine may take seconds per CLI call.
    const configure = await tally(['configure', 'cli:win', '--window-bucket', '1m', '--window-retention', '10m', ...router]);
    expect(configure.code).toBe(0);
    expect(configure.stdout.trim()).toBe('cli:win: autoscale on, 1 shard, window 10m in 1m buckets');
    const incrs = await Promise.all(['2', '3', '4'].map((amount) => tally(['incr', 'cli:win', amount, ...router])));
    expect(incrs.map((result) => result.code)).toEqual([0, 0, 0]);
    const read = await tally(['get', 'cli:win', '--last', '5m', ...router]);
    expect(read.code).toBe(0);
    expect(read.stdout.trim()).toMatch(
      /^cli:win = 9 in the last 5m \(exact; 5 buckets of 1m, \d{4}-\d\d-\d\dT[\d:.]+Z to \d{4}-\d\d-\d\dT[\d:.]+Z\)$/,
    );
    const json = JSON.parse((await tally(['get', 'cli:win', '--last', '600000', '--json', ...router])).stdout);
    expect(json).toMatchObject({ counter: 'cli:win', total: '9', bucketMs: 60_000, buckets: 10, lastMs: 600_000 });
    expect(json.toUnixMs - json.fromUnixMs).toBe(600_000);
    const beyond = await tally(['get', 'cli:win', '--last', '1h', ...router]);
    expect(beyond.code).toBe(1);
    expect(beyond.stderr.trim().split('\n')).toHaveLength(1);
    expect(beyond.stderr).toMatch(/^tally: out_of_range: .*retention/);
    expect((await tally(['configure', 'cli:win', '--no-window', ...router])).stdout.trim()).toBe(
      'cli:win: autoscale on, 1 shard, no window',
    );
  });

  it('member add, add again, remove report changed yes/no/yes and counts 1/1/0; check lists each member', async () => {
    const lines = async (args: string[]) => {
      const result = await tally([...args, ...router]);
      expect(result.code).toBe(0);
      return result.stdout.trim();
    };
    expect(await lines(['member', 'add', 'cli:likes-by', '42'])).toBe('changed: yes\ncount: 1');
    expect(await lines(['member', 'add', 'cli:likes-by', '42'])).toBe('changed: no\ncount: 1');
    expect(await lines(['member', 'add', 'cli:likes-by', '18446744073709551615'])).toBe('changed: yes\ncount: 2');
    expect(await lines(['member', 'check', 'cli:likes-by', '42', '7', '18446744073709551615'])).toBe(
      '42 present\n7 absent\n18446744073709551615 present',
    );
    expect(await lines(['member', 'remove', 'cli:likes-by', '18446744073709551615'])).toBe('changed: yes\ncount: 1');
    expect(await lines(['member', 'remove', 'cli:likes-by', '42'])).toBe('changed: yes\ncount: 0');
    expect(await lines(['member', 'check', 'cli:likes-by', '42'])).toBe('42 absent');
  });

  it('rebuild of a healthy membership counter says drift: 0 and exits 0', async () => {
    const configure = await tally(['configure', 'cli:members', '--membership-partitions', '4', ...router]);
    expect(configure.stdout.trim()).toBe('cli:members: membership counter, autoscale off, 4 partitions');
    for (const member of ['1', '2', '3']) expect((await tally(['member', 'add', 'cli:members', member, ...router])).code).toBe(0);
    const rebuild = await tally(['rebuild', 'cli:members', ...router]);
    expect(rebuild.code).toBe(0);
    expect(rebuild.stdout.trim()).toBe('cli:members: members 3, stored count 3, drift: 0, repaired: no');
    const verbose = await tally(['rebuild', 'cli:members', '--verbose', ...router]);
    expect(verbose.stdout.match(/^ {2}partition \d \(shard id \d+, pair \d\): members \d, stored count \d, drift: 0$/gm)).toHaveLength(4);
  });

  it('a bad member id or duration is one line on stderr, exit code 2, and no call', async () => {
    const cases = [
      ['member', 'add', 'likes', 'abc'],
      ['member', 'add', 'likes', '-1'],
      ['member', 'add', 'likes', '18446744073709551616'],
      ['get', 'x', '--last', '5x'],
      ['get', 'x', '--last', '0'],
      ['get', 'x', '--last', '99999999999999999999d'],
      ['configure', 'x', '--window-bucket', '1s'],
      ['configure', 'x', '--window-bucket', '1s', '--window-retention', 'forever'],
      ['configure', 'x', '--no-window', '--window-bucket', '1s', '--window-retention', '10s'],
    ];
    // A dead router: a CLI that called out would fail unavailable (exit 1), not 2.
    const results = await Promise.all(cases.map((args) => tally([...args, '--router', '127.0.0.1:1', '--deadline-ms', '500'])));
    results.forEach((result, index) => {
      expect({ args: cases[index], code: result.code }).toEqual({ args: cases[index], code: 2 });
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr.trim()).toMatch(/^tally: /);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(result.stdout).toBe('');
    });
    expect(results[2]!.stderr.trim()).toBe(
      'tally: member must be an unsigned 64-bit integer (0..18446744073709551615), got "18446744073709551616"',
    );
    expect(results[3]!.stderr.trim()).toBe('tally: --last must be a duration such as 90000 (ms), 1500ms, 30s, 15m, 1h or 7d, got "5x"');
  });

  it('a bad argument is one line on stderr and exit code 2, never a stack trace', async () => {
    for (const args of [['incr', 'x', 'lots'], ['frobnicate'], ['get'], ['set-shards', 'x', '-1'], ['incr', 'x', '--nope']]) {
      const result = await tally([...args, ...router]);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr.trim()).toMatch(/^tally: /);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('a server error is one line with its code and exit code 1', async () => {
    const zero = await tally(['incr', 'x', '0', ...router]);
    expect(zero.code).toBe(1);
    expect(zero.stderr.trim()).toBe('tally: invalid_argument: amount is 0; it must be non-zero');
    const missing = await tally(['describe', 'cli:never', ...router]);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe('tally: not_found: counter "cli:never" does not exist');
    const down = await tally(['get', 'x', '--router', '127.0.0.1:1', '--deadline-ms', '2000']);
    expect(down.code).toBe(1);
    expect(down.stderr.trim().split('\n')).toHaveLength(1);
    expect(down.stderr).toMatch(/^tally: unavailable: /);
  });
});
