// ListCounters against real processes: 50,000 counters under a prefix paged
// through while new ones are created, in byte order, no name twice, none
// missing, other prefixes left out; the client's iterator, the CLI, bad
// input, and the admin token it needs when tokens are set.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, status } from '@grpc/grpc-js';
import { AdminServiceClient } from '../../src/common/index.ts';
import { listPageSizeMax, newCountersPerCallMax } from '../../src/wire/index.ts';
import { createTallyClient, type ListedCounter } from '../../src/client/index.ts';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';
import { tally } from '../helpers/cli.ts';
import { rejection } from '../helpers/rejection.ts';
import type { RawRpcClient } from '../helpers/raw-client.ts';

const byteCompare = (left: string, right: string): number => Buffer.compare(Buffer.from(left), Buffer.from(right));

/** Creates counters (one increment each), newCountersPerCallMax per call: the router's cap on new counters per call. */
async function createCounters(tc: TestCluster, names: readonly string[]): Promise<void> {
  for (let start = 0; start < names.length; start += newCountersPerCallMax) {
    const items = names.slice(start, start + newCountersPerCallMax).map((counter) => ({ counter, amount: 1, idempotencyKey: null }));
    await tc.client.incrementBatch(items);
  }
}

function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))]!;
}

describe('list counters', () => {
  let tc: TestCluster;
  let raw: RawRpcClient;
  const listedCount = 50_000;
  const padded = (index: number): string => `list:${String(index).padStart(5, '0')}`;
  // Under the prefix but beyond ASCII: byte order differs from JavaScript's UTF-16 sort for the last two.
  const multiByte = ['list:é', 'list:\ufffd', 'list:😀'];
  // Around the prefix, never under it.
  const outside = ['list', 'list;', 'lisa', 'List:1', 'lis:1', 'listing'];
  const expected = [...Array.from({ length: listedCount }, (_, index) => padded(index)), ...multiByte].sort(byteCompare);

  beforeAll(async () => {
    tc = await startCluster({ pairs: 1 });
    raw = new AdminServiceClient(tc.cluster.routerAddress, credentials.createInsecure()) as unknown as RawRpcClient;
    const startedMs = Date.now();
    await createCounters(tc, [...expected, ...outside]);
    console.info(`list: created ${expected.length + outside.length} counters in ${Date.now() - startedMs} ms`);
  }, 300_000);
  afterAll(async () => {
    raw?.close();
    await tc?.stop();
  });

  it('a page costs its size, not its place: the last page of 50,000 is as quick as the first', async () => {
    // Warm the statements and the connection, then time the first and the last page of the range alternately.
    const firstMs: number[] = [];
    const lastMs: number[] = [];
    const lastToken = (await tc.client.listCounters({ prefix: 'list:49', pageSize: 1 })).nextPageToken;
    expect(lastToken).not.toBe('');
    for (let round = 0; round < 20; round++) {
      let startedMs = performance.now();
      expect((await tc.client.listCounters({ prefix: 'list:', pageSize: 100 })).counters).toHaveLength(100);
      firstMs.push(performance.now() - startedMs);
      startedMs = performance.now();
      // Resumed after list:49000, near the end of the same range.
      const tail = await tc.client.listCounters({ prefix: 'list:', pageToken: lastToken, pageSize: 100 });
      lastMs.push(performance.now() - startedMs);
      expect(tail.counters[0]!.name).toBe('list:49001');
    }
    console.info(
      `list: page of 100, first vs near the end of 50,000: p50 ${percentile(firstMs, 0.5).toFixed(2)} vs ${percentile(lastMs, 0.5).toFixed(2)} ms`,
    );
    // An OFFSET or a filter over every row would make the far page ~50x the near one; allow noise, not that.
    expect(percentile(lastMs, 0.5)).toBeLessThan(percentile(firstMs, 0.5) * 5 + 20);
  }, 60_000);

  it('the default page is 100; the last page has no token; an unmatched prefix is an empty last page', async () => {
    const page = await tc.client.listCounters({ prefix: 'list:' });
    expect(page.counters).toHaveLength(100);
    expect(page.counters[0]).toEqual({ name: 'list:00000', kind: 'total', shards: 1, ttlMs: 0 });
    expect(page.nextPageToken).not.toBe('');
    const exact = await tc.client.listCounters({ prefix: 'list:0000', pageSize: 10 });
    expect(exact.counters.map((counter) => counter.name)).toEqual(expected.slice(0, 10));
    // Exactly a page's worth left: the answer says it is the last (no empty page after it).
    expect(exact.nextPageToken).toBe('');
    expect(await tc.client.listCounters({ prefix: 'nothing-here:' })).toEqual({ counters: [], nextPageToken: '' });
  });

  it('allCounters iterates every page; kinds and shard counts are the directory’s', async () => {
    await tc.client.configure('iter:members', { membershipPartitions: 4 });
    await tc.client.addDistinct('iter:visitors', ['ann']);
    await tc.client.increment('iter:total', 1);
    await tc.client.setShards('iter:total', 3);
    const all: ListedCounter[] = [];
    for await (const counter of tc.client.allCounters({ prefix: 'iter:', pageSize: 2 })) all.push(counter);
    expect(all).toEqual([
      { name: 'iter:members', kind: 'membership', shards: 4, ttlMs: 0 },
      { name: 'iter:total', kind: 'total', shards: 3, ttlMs: 0 },
      { name: 'iter:visitors', kind: 'distinct', shards: 1, ttlMs: 0 },
    ]);
    const firstTen: string[] = [];
    for await (const counter of tc.client.allCounters({ prefix: 'list:' })) {
      firstTen.push(counter.name);
      if (firstTen.length === 10) break;
    }
    expect(firstTen).toEqual(expected.slice(0, 10));
  });

  it('a bad prefix, page size or page token is INVALID_ARGUMENT and changes nothing', async () => {
    const countersBefore = (await tc.client.clusterStatus()).counters;
    const rawList = (request: object): Promise<number> =>
      new Promise((resolve) => {
        raw.ListCounters!(request, { deadline: Date.now() + 5_000 }, (error: { code: number } | null) => resolve(error?.code ?? status.OK));
      });
    // The router's own checks, past any client.
    expect(await rawList({ prefix: 'list:\n' })).toBe(status.INVALID_ARGUMENT);
    expect(await rawList({ prefix: 'x'.repeat(201) })).toBe(status.INVALID_ARGUMENT);
    expect(await rawList({ prefix: 'é'.repeat(101) })).toBe(status.INVALID_ARGUMENT);
    expect(await rawList({ prefix: 'list:', pageSize: listPageSizeMax + 1 })).toBe(status.INVALID_ARGUMENT);
    expect(await rawList({ prefix: 'list:', pageToken: 'garbage!' })).toBe(status.INVALID_ARGUMENT);
    const token = (await tc.client.listCounters({ prefix: 'list:', pageSize: 1 })).nextPageToken;
    expect(await rawList({ prefix: 'list:', pageToken: token.slice(0, -2) })).toBe(status.INVALID_ARGUMENT);
    expect(await rawList({ prefix: 'other:', pageToken: token })).toBe(status.INVALID_ARGUMENT);
    // Through the client: the router's answer, and a lone surrogate refused before any call.
    const tooLarge = await rejection(tc.client.listCounters({ prefix: 'list:', pageSize: 5_000 }));
    expect(tooLarge.grpcCode).toBe(status.INVALID_ARGUMENT);
    expect(tooLarge.message).toMatch(/page_size must be 1\.\.1000/);
    expect((await rejection(tc.client.listCounters({ prefix: 'bad\ud800' }))).code).toBe('invalid_argument');
    expect((await tc.client.clusterStatus()).counters).toBe(countersBefore);
  });

  it('cli: tally ls prints name, kind and shards per line, pages through, stops at --limit, and --json gives one object per line', async () => {
    const router = ['--router', tc.cluster.routerAddress];
    const ls = await tally(['ls', 'list:0001', ...router]);
    expect(ls.code, ls.stderr).toBe(0);
    expect(ls.stdout.trim().split('\n')).toEqual(expected.slice(10, 20).map((name) => `${name}  total  1 shard`));
    const limited = await tally(['ls', 'list:', '--limit', '3', ...router]);
    expect(limited.code).toBe(0);
    expect(limited.stdout.trim().split('\n')).toHaveLength(3);
    expect(limited.stderr.trim()).toBe('tally: stopped at --limit 3; more counters follow');
    // More than one page of the CLI's 1,000: it follows the token.
    const many = await tally(['ls', 'list:0', '--json', ...router]);
    expect(many.code).toBe(0);
    const lines = many.stdout.trim().split('\n');
    expect(lines).toHaveLength(10_000);
    expect(JSON.parse(lines[1_000]!)).toEqual({ name: 'list:01000', kind: 'total', shards: 1, ttlMs: 0 });
    expect((await tally(['ls', 'iter:', ...router])).stdout).toMatch(/^iter:members {2}membership {2}4 partitions$/m);
  }, 60_000);

  it('cli: tally ls errors are one line: a bad prefix exits 1, bad arguments exit 2', async () => {
    const router = ['--router', tc.cluster.routerAddress];
    const bad = await tally(['ls', 'x'.repeat(201), ...router]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('tally: invalid_argument: prefix is 201 bytes; the limit is 200\n');
    const limit = await tally(['ls', '--limit', 'many', ...router]);
    expect(limit.code).toBe(2);
    expect(limit.stderr.trim().split('\n')).toHaveLength(1);
    expect((await tally(['ls', 'a', 'b', ...router])).stderr).toBe('tally: expected: tally ls [prefix] [--limit N]\n');
    expect((await tally(['ls', '--limit', '0', ...router])).code).toBe(2);
  });

  // Last of its group: the names it creates under list: would shift what the tests above expect.
  it('50,000 counters under a prefix page through in byte order, each once, while new ones are created', async () => {
    const seen: string[] = [];
    const pageMs: number[] = [];
    const createdDuringScan: string[] = [];
    let pageToken = '';
    let pageIndex = 0;
    do {
      const startedMs = performance.now();
      const page = await tc.client.listCounters({ prefix: 'list:', pageToken, pageSize: listPageSizeMax });
      pageMs.push(performance.now() - startedMs);
      expect(page.counters.length).toBeLessThanOrEqual(listPageSizeMax);
      for (const counter of page.counters) {
        expect(counter.kind).toBe('total');
        expect(counter.shards).toBe(1);
        seen.push(counter.name);
      }
      pageToken = page.nextPageToken;
      // New names land before, inside and after the part already listed; none of them is owed to this scan.
      const fresh = [`list:${pageIndex}-new`, `list:zz-${pageIndex}`, `lisu:${pageIndex}`];
      await createCounters(tc, fresh);
      createdDuringScan.push(...fresh);
      pageIndex++;
    } while (pageToken !== '');
    for (let index = 1; index < seen.length; index++) expect(byteCompare(seen[index - 1]!, seen[index]!), seen[index]).toBeLessThan(0);
    const seenSet = new Set(seen);
    for (const name of expected) expect(seenSet.has(name), name).toBe(true);
    const expectedSet = new Set(expected);
    const extra = seen.filter((name) => !expectedSet.has(name));
    for (const name of extra) expect(createdDuringScan.includes(name) && name.startsWith('list:'), name).toBe(true);
    // The last pages were listed after "list:zz-*" names were created ahead of them.
    expect(extra.some((name) => name.startsWith('list:zz-'))).toBe(true);
    console.info(
      `list: ${pageMs.length} pages of ${listPageSizeMax} at ${expected.length} counters: p50 ${percentile(pageMs, 0.5).toFixed(1)} ms, p90 ${percentile(pageMs, 0.9).toFixed(1)} ms, max ${Math.max(...pageMs).toFixed(1)} ms (client round trip)`,
    );
    // Generous: a page is one indexed range scan (about a millisecond of router time), not a scan of 50,000 rows.
    expect(percentile(pageMs, 0.5)).toBeLessThan(250);
  }, 120_000);
});

describe('list counters with tokens', () => {
  let tc: TestCluster;
  beforeAll(async () => {
    tc = await startCluster({ pairs: 1, secure: true });
  });
  afterAll(async () => {
    await tc?.stop();
  });

  it('auth: ListCounters needs the admin token: the client token is PERMISSION_DENIED, no token UNAUTHENTICATED', async () => {
    const file = (name: string): Buffer => fs.readFileSync(path.join(tc.certDir!, name));
    await tc.client.increment('secret:1', 1);
    expect((await tc.client.listCounters({ prefix: 'secret:' })).counters.map((counter) => counter.name)).toEqual(['secret:1']);
    const user = createTallyClient({
      address: tc.cluster.routerAddress,
      tls: { ca: file('ca.crt') },
      token: file('client.token').toString().trim(),
      attemptsMax: 1,
    });
    const anonymous = createTallyClient({ address: tc.cluster.routerAddress, tls: { ca: file('ca.crt') }, attemptsMax: 1 });
    try {
      expect((await rejection(user.listCounters({ prefix: 'secret:' }))).grpcCode).toBe(status.PERMISSION_DENIED);
      expect((await rejection(anonymous.listCounters())).grpcCode).toBe(status.UNAUTHENTICATED);
    } finally {
      user.close();
      anonymous.close();
    }
    const args = ['--router', tc.cluster.routerAddress, '--tls-ca', path.join(tc.certDir!, 'ca.crt')];
    const denied = await tally(['ls', ...args], { TALLY_TOKEN: file('client.token').toString().trim() });
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/^tally: permission_denied: [^\n]*\n$/);
    const allowed = await tally(['ls', 'secret:', ...args, '--token-file', path.join(tc.certDir!, 'admin.token')]);
    expect(allowed.stdout).toBe('secret:1  total  1 shard\n');
  });
});
