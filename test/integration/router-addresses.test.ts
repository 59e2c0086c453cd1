// A client (library and CLI) given several router addresses, one of them dead
// (a loopback port nothing listens on): every kind of call succeeds through
// the live one, nothing counts twice, TLS and the token apply to each address,
// and a malformed list is refused before any call.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTallyClient, type TallyClient, type TallyClientOptions } from '../../src/client/index.ts';
import { routerAvoidMsMin } from '../../src/wire/index.ts';
import { tally } from '../helpers/cli.ts';
import { pause, startCluster, type TestCluster } from '../helpers/cluster.ts';
import { codeOf } from '../helpers/rejection.ts';
import { deadAddress } from '../helpers/router-proxy.ts';

/**
 * Every kind of call, `width` at once so that some start their turn at each
 * router (a fresh client's turns alternate from a random first one): the dead
 * router is passed over with nothing sent, whatever the call.
 */
async function everyKindOfCall(client: TallyClient, prefix: string, width: number): Promise<{ counter: string; expected: bigint }> {
  const counter = `${prefix}:total`;
  const burst = <T>(call: (index: number) => Promise<T>) => Promise.all(Array.from({ length: width }, (_, index) => call(index)));
  await burst(() => client.increment(counter, 1, { idempotencyKey: null }));
  await burst((index) => client.increment(counter, 10, { idempotencyKey: `${prefix}:k${index}` }));
  await burst(() =>
    client.incrementBatch([
      { counter, amount: 100, idempotencyKey: null },
      { counter, amount: 100, idempotencyKey: null },
    ]),
  );
  await burst((index) => client.incrementBatch([{ counter, amount: 1_000, idempotencyKey: `${prefix}:b${index}` }]));
  await burst(() => client.read(counter));
  await burst(() => client.readMany([counter]));
  await burst(() => client.describe(counter));
  const statuses = await burst(() => client.clusterStatus());
  expect(statuses.every((status) => status.nodes.length === 2)).toBe(true);
  await burst((index) => client.setMember(`${prefix}:members`, index, true));
  await burst(() => client.isMember(`${prefix}:members`, [0]));
  return { counter, expected: BigInt(width) * (1n + 10n + 200n + 1_000n) };
}

describe('several router addresses', () => {
  let tc: TestCluster;
  let live: string;
  let dead: string;
  const clients: TallyClient[] = [];
  const client = (options: TallyClientOptions): TallyClient => {
    const made = createTallyClient({ deadlineMs: 5_000, ...options });
    clients.push(made);
    return made;
  };

  beforeAll(async () => {
    tc = await startCluster({ pairs: 1 });
    live = tc.cluster.routerAddress;
    dead = await deadAddress();
  });
  afterAll(async () => {
    for (const made of clients) made.close();
    await tc?.stop();
  });

  it('with [dead, live] and [live, dead] every kind of call succeeds, unkeyed ones included, each counted once', async () => {
    for (const [name, addresses] of [
      ['dead-first', [dead, live]],
      ['live-first', [live, dead]],
    ] as const) {
      const several = client({ addresses });
      const { counter, expected } = await everyKindOfCall(several, `routers:${name}`, 4);
      expect((await tc.client.read(counter)).total, name).toBe(expected);
    }
  });

  it('once the dead router has failed and its back-off has passed, calls pass over it again at once (its channel stays failed)', async () => {
    const several = client({ addresses: [dead, live] });
    await everyKindOfCall(several, 'routers:again-1', 4);
    await pause(routerAvoidMsMin + 100);
    const { counter, expected } = await everyKindOfCall(several, 'routers:again-2', 4);
    expect((await tc.client.read(counter)).total).toBe(expected);
  });

  it('the coalescing client with [dead, live] answers every caller and counts each increment once', async () => {
    const coalescing = client({ addresses: [dead, live], coalesce: true });
    const counter = 'routers:coalesced';
    await Promise.all([
      ...Array.from({ length: 64 }, () => coalescing.increment(counter, 1, { idempotencyKey: null })),
      ...Array.from({ length: 64 }, (_, index) => coalescing.increment(counter, 2, { idempotencyKey: `routers:coalesced:${index}` })),
      ...Array.from({ length: 64 }, () => coalescing.increment(counter, 4)),
    ]);
    expect((await tc.client.read(counter)).total).toBe(64n * 7n);
  });

  it('only dead addresses: an unkeyed increment fails UNAVAILABLE naming each router, as one address does', async () => {
    const other = await deadAddress();
    const none = client({ addresses: [dead, other], deadlineMs: 2_000 });
    const error = await none.increment('routers:nowhere', 1, { idempotencyKey: null }).then(
      () => undefined,
      (failure: unknown) => failure as Error & { code: string },
    );
    expect(error?.code).toBe('unavailable');
    expect(error?.message).toContain('not sent to');
    expect(error?.message).toMatch(new RegExp(`${dead}|${other}`));
  });

  it('a malformed address list is refused when the client is built (INVALID_ARGUMENT), before any call', () => {
    expect(codeOf(() => createTallyClient({ addresses: [] }))).toBe('invalid_argument');
    expect(codeOf(() => createTallyClient({ addresses: [live, live] }))).toBe('invalid_argument');
    expect(codeOf(() => createTallyClient({ address: `${dead},${live}` }))).toBe('invalid_argument');
    expect(codeOf(() => createTallyClient({ address: live, addresses: [live] }))).toBe('invalid_argument');
    expect(codeOf(() => createTallyClient({} as TallyClientOptions))).toBe('invalid_argument');
  });

  it('a token without TLS is refused if any address of the list is off loopback', () => {
    expect(codeOf(() => createTallyClient({ addresses: [live, '192.0.2.1:50051'], token: 'secret' }))).toBe('failed_precondition');
    expect(codeOf(() => createTallyClient({ addresses: ['localhost:50051', live], token: 'secret' }))).toBe('failed_precondition');
    const loopback = createTallyClient({ addresses: [live, '[::1]:1'], token: 'secret' });
    loopback.close();
  });

  it('cli: --router dead,live and TALLY_ROUTER=dead,live serve increments, reads and status', async () => {
    const router = ['--router', `${dead},${live}`];
    for (let run = 0; run < 3; run++) expect((await tally(['incr', 'routers:cli', '2', ...router])).code).toBe(0);
    const get = await tally(['get', 'routers:cli'], { TALLY_ROUTER: `${dead},${live}` });
    expect(get.code).toBe(0);
    expect(get.stdout.trim()).toBe('routers:cli = 6 (exact, 1 shard)');
    const status = await tally(['status', '--router', `${live},${dead}`]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/pair 0 {2}primary/);
    // --router wins over TALLY_ROUTER, as with one address.
    const flagWins = await tally(['get', 'routers:cli', '--router', `${live}`], { TALLY_ROUTER: 'nonsense' });
    expect(flagWins.stdout.trim()).toBe('routers:cli = 6 (exact, 1 shard)');
  });

  it('cli: health checks each router of the list and exits 1 when one is not SERVING', async () => {
    const both = await tally(['health', '--router', `${live},${dead}`]);
    expect(both.code).toBe(1);
    expect(both.stdout.trim().split('\n')).toEqual([`${live}: SERVING`, `${dead}: UNREACHABLE`]);
    expect((await tally(['health', '--router', live])).code).toBe(0);
  });

  it('cli: a malformed --router or TALLY_ROUTER is one line on stderr, exit code 2, and no call', async () => {
    const cases: [string[], NodeJS.ProcessEnv, RegExp][] = [
      [['get', 'x', '--router', `${live},`], {}, /^tally: --router ".*," has an empty entry/],
      [['get', 'x', '--router', 'localhost'], {}, /^tally: --router entry "localhost" is not host:port/],
      [['get', 'x', '--router', `${live},${live}`], {}, /^tally: --router names .* twice$/],
      [['get', 'x'], { TALLY_ROUTER: `${live};${dead}` }, /^tally: TALLY_ROUTER entry ".*" is not host:port/],
      [['get', 'x'], { TALLY_ROUTER: '' }, /^tally: TALLY_ROUTER "" has an empty entry/],
    ];
    for (const [args, env, message] of cases) {
      const result = await tally(args, env);
      expect({ args, env, code: result.code }).toEqual({ args, env, code: 2 });
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr.trim()).toMatch(message);
      expect(result.stdout).toBe('');
    }
  });
});

describe('several router addresses over TLS with a token', () => {
  let tc: TestCluster;
  afterAll(async () => {
    await tc?.stop();
  });

  it('TLS and the token apply to every address: [dead, live] over TLS serves writes, reads and admin calls', async () => {
    tc = await startCluster({ pairs: 1, secure: true });
    const file = (name: string) => fs.readFileSync(path.join(tc.certDir!, name));
    const secure = createTallyClient({
      addresses: [await deadAddress(), tc.cluster.routerAddress],
      tls: { ca: file('ca.crt') },
      token: file('admin.token').toString('utf8').trim(),
    });
    try {
      const { counter, expected } = await everyKindOfCall(secure, 'routers:tls', 4);
      expect((await secure.read(counter)).total).toBe(expected);
    } finally {
      secure.close();
    }
  });
});
