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

  it('cli: incr, get and describe work and print readable lines', async () => {
    expect((await tally(['incr', 'cli:likes', '5', ...router])).code).toBe(0);
    const negative = await tally(['incr', 'cli:likes', '-2', ...router]);
    expect(negative.code).toBe(0);
    expect(negative.stdout).toMatch(/applied: cli:likes -2 on shard 0/);
    // "--" ends the flags, as the README shows for negative amounts.
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
    expect(describeOut.stdout.match(/^  shard \d/gm)).toHaveLength(3);
  });

  it('cli: --json output parses and carries exact int64 totals; TALLY_ROUTER sets the router', async () => {
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

  it('cli: incr --key applies once; reconcile reports zero drift; status shows epochs and sync', async () => {
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

  it('cli: a bad argument is one line on stderr and exit code 2, never a stack trace', async () => {
    for (const args of [['incr', 'x', 'lots'], ['frobnicate'], ['get'], ['set-shards', 'x', '-1'], ['incr', 'x', '--nope']]) {
      const result = await tally([...args, ...router]);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr.trim()).toMatch(/^tally: /);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('cli: a server error is one line with its code and exit code 1', async () => {
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
