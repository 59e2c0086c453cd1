// The outbox relay (G12) against a real PostgreSQL and real Tally processes:
// startup refusals as one line, rolled-back rows never counting, dead
// letters, the window edge (a short dedup window), and recount --repair.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { ErrorCode, TallyError } from '../../src/wire/index.ts';
import type { IncrementOptions } from '../../src/client/index.ts';
import { parseRelayConfig } from '../../src/relay/index.ts';
import { Outbox } from '../../src/relay/outbox.ts';
import { recount } from '../../src/relay/recount.ts';
import { scrapeMetric, startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';
import { tally, type CliResult } from '../helpers/cli.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { spawnRelay } from '../helpers/relay-process.ts';
import { pause } from '../helpers/pause.ts';

/** What the Kubernetes check reads of the relay's container. */
interface RelayContainer {
  args: string[];
  envFrom: { configMapRef: { name: string } }[];
  readinessProbe: { httpGet: { port: number } };
  livenessProbe: { httpGet: { port: number } };
  resources: { requests: Record<string, string> };
}

/** Short, so the window-edge test waits it out in seconds; nothing else here re-sends late. */
const dedupWindowMs = 3_000;
const windowArgs = ['--dedup-window-ms', String(dedupWindowMs)];

describe('outbox relay', () => {
  let tc: TestCluster;
  let pg: TestPostgres;
  /** The router and how to reach it: TLS and the client token, as a secured deployment runs the relay. */
  let tallyArgs: string[];
  beforeAll(async () => {
    const window = ['--dedup-window-ms', String(dedupWindowMs)];
    [tc, pg] = await Promise.all([startCluster({ pairs: 1, secure: true, routerArgs: window, nodeArgs: window }), startPostgres()]);
    const certDir = tc.certDir!;
    tallyArgs = [
      '--router',
      tc.cluster.routerAddress,
      '--tls-ca',
      path.join(certDir, 'ca.crt'),
      // The relay asks ClusterStatus (AdminService) for the cluster's dedup window: the admin token.
      '--token-file',
      path.join(certDir, 'admin.token'),
    ];
  }, 60_000);
  afterAll(async () => {
    await Promise.all([tc?.stop(), pg?.stop()]);
  });

  /** tally relay/recount against this file's cluster and database. */
  const run = (command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> =>
    tally([command, ...args, ...tallyArgs, '--dedup-window-ms', String(dedupWindowMs)], { TALLY_POSTGRES: pg.url, ...env });

  const expectOneLineFailure = (result: CliResult, text: string): void => {
    expect(result.code, result.stderr).not.toBe(0);
    expect(result.stderr.trim().split('\n'), result.stderr).toHaveLength(1);
    expect(result.stderr).toContain(text);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  };

  it('refuses a bad URL, an unreachable server, a missing table and wrong columns with one line and a non-zero exit', async () => {
    await pg.query(
      'CREATE TABLE wrong_outbox (id bigint PRIMARY KEY, counter text NOT NULL, amount integer NOT NULL, created_at timestamptz NOT NULL)',
    );
    // Independent refusals, each its own relay process, started together.
    const [badUrl, httpUrl, unreachable, missingTable, wrongColumns, badName] = await Promise.all([
      run('relay', ['--postgres', 'not a url', '--once']),
      run('relay', ['--postgres', 'http://example.com/x', '--once']),
      run('relay', ['--once'], { TALLY_POSTGRES: 'postgresql://tally:secret@127.0.0.1:1/postgres' }),
      run('relay', ['--table', 'no_such_outbox', '--once']),
      run('relay', ['--table', 'wrong_outbox', '--once']),
      run('relay', ['--table', 'Bad-Name', '--once']),
    ]);
    expectOneLineFailure(badUrl, '--postgres must be a URL');
    expectOneLineFailure(httpUrl, 'postgresql://');
    expectOneLineFailure(unreachable, 'cannot connect to PostgreSQL at 127.0.0.1:1/postgres');
    expect(unreachable.stderr).not.toContain('secret');
    expectOneLineFailure(missingTable, 'table no_such_outbox does not exist');
    expectOneLineFailure(wrongColumns, 'column wrong_outbox.amount is integer; expected bigint');
    expectOneLineFailure(badName, '--table must be a table name');
    // Tally refuses a relay without the token: --once says so at once.
    expect((await run('relay', ['--create-table', '--table', 'token_outbox'])).code).toBe(0);
    await pg.query(`INSERT INTO token_outbox (counter, amount) VALUES ('token:a', 1)`);
    const untokened = await tally(['relay', '--table', 'token_outbox', '--once', ...tallyArgs.slice(0, 4)], { TALLY_POSTGRES: pg.url });
    expectOneLineFailure(untokened, 'unauthenticated');
  }, 30_000);

  it('every committed row counts exactly once and a rolled-back row never does', async () => {
    const created = await run('relay', ['--create-table', '--table', 'basic_outbox', '--archive-table', 'basic_archive']);
    expect(created.code, created.stderr).toBe(0);
    const db = await pg.connect();
    const expected = new Map<string, bigint>();
    try {
      for (let txIndex = 0; txIndex < 40; txIndex++) {
        await db.query('BEGIN');
        const counter = `basic:${txIndex % 4}`;
        const amount = BigInt(txIndex % 7 === 0 ? -(txIndex + 1) : txIndex + 1);
        await db.query('INSERT INTO basic_outbox (counter, amount) VALUES ($1, $2), ($1, $2)', [counter, amount.toString()]);
        if (txIndex % 5 === 0) {
          await db.query('ROLLBACK');
        } else {
          await db.query('COMMIT');
          expected.set(counter, (expected.get(counter) ?? 0n) + 2n * amount);
        }
      }
    } finally {
      await db.end();
    }
    const relayed = await run('relay', ['--table', 'basic_outbox', '--archive-table', 'basic_archive', '--batch', '7', '--once']);
    expect(relayed.code, relayed.stderr).toBe(0);
    for (const [counter, total] of expected) expect((await tc.client.read(counter)).total, counter).toBe(total);
    expect(await pg.query('SELECT count(*)::int AS n FROM basic_outbox')).toEqual([{ n: 0 }]);
    expect(await pg.query('SELECT count(*)::int AS n FROM basic_archive')).toEqual([{ n: 64 }]);
    // A second pass finds nothing to do and counts nothing again.
    expect((await run('relay', ['--table', 'basic_outbox', '--archive-table', 'basic_archive', '--once'])).code).toBe(0);
    for (const [counter, total] of expected) expect((await tc.client.read(counter)).total, counter).toBe(total);
  }, 30_000);

  it('bad rows go to the dead-letter table with their reason, counted in a metric; the good rows around them count', async () => {
    expect((await run('relay', ['--create-table', '--table', 'bad_outbox'])).code).toBe(0);
    // An overflow: the counter sits near int64's top, and one row would push it over.
    await tc.client.increment('bad:near-max', 9_223_372_036_854_775_000n);
    await pg.query(
      `INSERT INTO bad_outbox (counter, amount) VALUES
        ('bad:good', 1), ('', 5), ('bad:good', 2), ($1, 5), ('bad:zero', 0), ('bad:good', 3),
        (E'bad:\\x01ctl', 4), ('bad:near-max', 1000), ('bad:near-max', 7), ('bad:good', 4)`,
      ['x'.repeat(201)],
    );
    const relay = spawnRelay(['--table', 'bad_outbox', '--metrics-port', 'any', ...tallyArgs, '--batch', '100', ...windowArgs], {
      TALLY_POSTGRES: pg.url,
    });
    try {
      await waitFor(async () => (await pg.query('SELECT count(*)::int AS n FROM bad_outbox'))[0]!.n === 0, {
        timeoutMs: 20_000,
        what: `the outbox to empty (relay: ${relay.stderr().slice(-400)})`,
      });
      const dead = await pg.query<{ counter: string; amount: string; reason: string }>(
        'SELECT counter, amount::text, reason FROM bad_outbox_dead_letters ORDER BY id',
      );
      expect(dead.map((row) => [row.counter.slice(0, 12), row.amount, row.reason.split(':')[0]])).toEqual([
        ['', '5', 'invalid_argument'],
        ['x'.repeat(12), '5', 'invalid_argument'],
        ['bad:zero', '0', 'invalid_argument'],
        ['bad:\x01ctl', '4', 'invalid_argument'],
        ['bad:near-max', '1000', 'out_of_range'],
      ]);
      expect(dead.map((row) => row.reason)).toContain('invalid_argument: counter name is empty');
      expect((await tc.client.read('bad:good')).total).toBe(10n);
      expect((await tc.client.read('bad:near-max')).total).toBe(9_223_372_036_854_775_007n);
      await waitFor(() => relay.metricsPort, { timeoutMs: 5_000, what: 'the relay metrics port' });
      expect(await scrapeMetric(relay.metricsPort!, 'tally_relay_dead_letters_total')).toBe(5);
      expect(await scrapeMetric(relay.metricsPort!, 'tally_relay_dead_letters_total', { reason: 'out_of_range' })).toBe(1);
      expect(await scrapeMetric(relay.metricsPort!, 'tally_relay_rows_relayed_total', { outcome: 'applied' })).toBe(5);
      await waitFor(async () => (await scrapeMetric(relay.metricsPort!, 'tally_relay_rows_pending')) === 0, { timeoutMs: 5_000 });
    } finally {
      relay.child.kill('SIGTERM');
      expect(await relay.exited).toBe(0);
    }
  }, 40_000);

  it('a row refused for the counters cap goes alone to the dead letters (cap_exceeded, counted by cap); the rest of its batch counts', async () => {
    const window = ['--dedup-window-ms', String(dedupWindowMs)];
    const capped = await startCluster({ pairs: 1, routerArgs: ['--counters-max', '3', ...window], nodeArgs: window });
    try {
      const capArgs = ['--router', capped.cluster.routerAddress, ...window];
      expect((await tally(['relay', '--create-table', '--table', 'cap_outbox', ...capArgs], { TALLY_POSTGRES: pg.url })).code).toBe(0);
      await pg.query(
        `INSERT INTO cap_outbox (counter, amount) VALUES ('cap:a', 1), ('cap:b', 2), ('cap:a', 3), ('cap:c', 4), ('cap:d', 5), ('cap:a', 6)`,
      );
      const relay = spawnRelay(['--table', 'cap_outbox', '--metrics-port', 'any', '--batch', '100', ...capArgs], {
        TALLY_POSTGRES: pg.url,
      });
      try {
        await waitFor(async () => (await pg.query('SELECT count(*)::int AS n FROM cap_outbox'))[0]!.n === 0, {
          timeoutMs: 15_000,
          what: `the outbox to empty past a cap refusal (relay: ${relay.stderr().slice(-400)})`,
        });
        const dead = await pg.query<{ counter: string; reason: string }>('SELECT counter, reason FROM cap_outbox_dead_letters ORDER BY id');
        expect(dead).toHaveLength(1);
        expect(dead[0]!.counter).toBe('cap:d');
        expect(dead[0]!.reason).toMatch(/^cap_exceeded: the directory holds 3 counters; 1 new ones would pass the limit of 3 counters/);
        expect((await capped.client.readMany(['cap:a', 'cap:b', 'cap:c'])).map((read) => read.total)).toEqual([10n, 2n, 4n]);
        await waitFor(() => relay.metricsPort, { timeoutMs: 5_000, what: 'the relay metrics port' });
        expect(await scrapeMetric(relay.metricsPort!, 'tally_relay_cap_refusals_total', { cap: 'counters_max' })).toBe(1);
        expect(await scrapeMetric(relay.metricsPort!, 'tally_relay_dead_letters_total', { reason: 'cap_exceeded' })).toBe(1);
      } finally {
        await relay.kill('SIGTERM');
      }
    } finally {
      await capped.stop();
    }
  }, 40_000);

  it('a batch that would create more than 1,000 new counters in one call is halved until it passes; nothing is dead-lettered', async () => {
    expect((await run('relay', ['--create-table', '--table', 'many_outbox'])).code).toBe(0);
    await pg.query(`INSERT INTO many_outbox (counter, amount) SELECT 'many:' || g, g FROM generate_series(1, 1500) AS g`);
    const relayed = await run('relay', ['--table', 'many_outbox', '--batch', '2000', '--once']);
    expect(relayed.code, relayed.stderr).toBe(0);
    expect(await pg.query('SELECT count(*)::int AS n FROM many_outbox')).toEqual([{ n: 0 }]);
    expect(await pg.query('SELECT count(*)::int AS n FROM many_outbox_dead_letters')).toEqual([{ n: 0 }]);
    const reads = await tc.client.readMany(['many:1', 'many:750', 'many:751', 'many:1500']);
    expect(reads.map((read) => read.total)).toEqual([1n, 750n, 751n, 1500n]);
  }, 60_000);

  it('a row whose first send is older than the dedup window is never sent again; the relay halts, names it, and --resolve decides', async () => {
    expect((await run('relay', ['--create-table', '--table', 'edge_outbox', '--archive-table', 'edge_archive'])).code).toBe(0);
    const args = ['--table', 'edge_outbox', '--archive-table', 'edge_archive', '--once'];
    // Row 1 reaches Tally and the relay dies before its commit; row 2's relay dies before sending
    // (row 1 held by the test meanwhile, so that relay skips it however long this takes).
    await pg.query(`INSERT INTO edge_outbox (counter, amount) VALUES ('edge:sent', 5), ('edge:unsent', 3)`);
    const crashed = await run('relay', [...args, '--batch', '1'], { TALLY_RELAY_TEST_HOOK: 'exit-after-ack' });
    expect(crashed.code, crashed.stderr).toBeNull();
    expect((await tc.client.read('edge:sent')).total).toBe(5n);
    const holder = await pg.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM edge_outbox WHERE id = 1 FOR UPDATE');
      const unsent = await run('relay', args, { TALLY_RELAY_TEST_HOOK: 'exit-before-send' });
      expect(unsent.code, unsent.stderr).toBeNull();
    } finally {
      await holder.end();
    }
    expect((await tc.client.read('edge:unsent')).total).toBe(0n);
    expect(await pg.query('SELECT id::int FROM edge_outbox_attempts ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
    // Past the window Tally has forgotten row 1's key: a re-send would count it twice.
    await pause(dedupWindowMs);
    const halted = await run('relay', args);
    expectOneLineFailure(halted, 'rows 1, 2 of edge_outbox were first sent');
    expect(halted.stderr).toContain('tally relay --resolve');
    expect((await tc.client.read('edge:sent')).total).toBe(5n);
    const relay = spawnRelay(
      [
        '--table',
        'edge_outbox',
        '--archive-table',
        'edge_archive',
        '--metrics-port',
        'any',
        ...tallyArgs,
        '--dedup-window-ms',
        String(dedupWindowMs),
      ],
      {
        TALLY_POSTGRES: pg.url,
      },
    );
    try {
      await waitFor(async () => relay.metricsPort !== undefined && (await scrapeMetric(relay.metricsPort, 'tally_relay_halted')) === 1, {
        timeoutMs: 10_000,
      });
      expect(await scrapeMetric(relay.metricsPort!, 'tally_relay_rows_beyond_window')).toBe(2);
      expect(await scrapeMetric(relay.metricsPort!, 'tally_relay_row_beyond_window_id')).toBe(1);
      // recount tells the two apart: edge:sent's drift is its row's amount (it counted), edge:unsent's is 0.
      const sent = await run('recount', ['edge:sent', '--table', 'edge_outbox', '--archive-table', 'edge_archive']);
      expect(sent.code).toBe(3);
      expect(sent.stdout).toContain('drift +5; rows 1 (summing 5) are beyond the dedup window');
      const list = await run('relay', ['--table', 'edge_outbox', '--resolve', 'list']);
      expect(list.stdout).toContain('row 1: edge:sent +5');
      expect(list.stdout).toContain('--resolve counted');
      expect(
        (await run('relay', ['--table', 'edge_outbox', '--archive-table', 'edge_archive', '--resolve', 'counted', '--rows', '1'])).stdout,
      ).toContain('resolved 1 row (1)');
      expect((await run('relay', ['--table', 'edge_outbox', '--resolve', 'resend', '--rows', '2'])).stdout).toContain('resolved 1 row (2)');
      const refused = await run('relay', ['--table', 'edge_outbox', '--resolve', 'counted', '--rows', '99']);
      expectOneLineFailure(refused, 'row 99 is not in the outbox');
      // The running relay sees the rows resolved and goes on.
      await waitFor(async () => (await scrapeMetric(relay.metricsPort!, 'tally_relay_halted')) === 0, { timeoutMs: 10_000 });
      await waitFor(async () => (await tc.client.read('edge:unsent')).total === 3n, { timeoutMs: 10_000 });
    } finally {
      await relay.kill('SIGTERM');
    }
    expect((await tc.client.read('edge:sent')).total).toBe(5n);
    expect(await pg.query('SELECT id::int, counter FROM edge_archive ORDER BY id')).toEqual([
      { id: 1, counter: 'edge:sent' },
      { id: 2, counter: 'edge:unsent' },
    ]);
  }, 40_000);

  it('recount: finds drift a direct Increment put on an outbox-only counter; --repair run twice corrects it once', async () => {
    expect((await run('relay', ['--create-table', '--table', 'pool_outbox', '--archive-table', 'pool_archive'])).code).toBe(0);
    await pg.query(`INSERT INTO pool_outbox (counter, amount) SELECT 'pool:1', g FROM generate_series(1, 50) AS g`);
    const relayArgs = ['--table', 'pool_outbox', '--archive-table', 'pool_archive', '--once'];
    expect((await run('relay', relayArgs)).code).toBe(0);
    const recountArgs = ['pool:1', '--table', 'pool_outbox', '--archive-table', 'pool_archive'];
    const clean = await run('recount', recountArgs);
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stdout).toContain('pool:1: archived 50 rows summing 1275, exact total 1275, drift 0: in agreement');
    await tc.client.increment('pool:1', 40n);
    const found = await run('recount', [...recountArgs, '--json']);
    expect(found.code).toBe(3);
    expect(JSON.parse(found.stdout)).toMatchObject({ counter: 'pool:1', archivedSum: '1275', total: '1315', drift: '40', repaired: false });
    const first = await run('recount', [...recountArgs, '--repair']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('repaired: applied -40');
    const second = await run('recount', [...recountArgs, '--repair']);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('drift 0: in agreement');
    expect((await tc.client.read('pool:1')).total).toBe(1275n);
    // Rows relayed after the repair still agree.
    await pg.query(`INSERT INTO pool_outbox (counter, amount) VALUES ('pool:1', 25)`);
    expect((await run('relay', relayArgs)).code).toBe(0);
    expect((await run('recount', recountArgs)).stdout).toContain('summing 1300, exact total 1300, drift 0');
  }, 40_000);

  it('refuses to start with a --dedup-window-ms longer than the cluster advertises (ClusterStatus), naming both', async () => {
    expect((await run('relay', ['--create-table', '--table', 'window_outbox'])).code).toBe(0);
    await pg.query(`INSERT INTO window_outbox (counter, amount) VALUES ('window:a', 1)`);
    const longer = await tally(['relay', '--table', 'window_outbox', '--once', ...tallyArgs, '--dedup-window-ms', '4000'], {
      TALLY_POSTGRES: pg.url,
    });
    expectOneLineFailure(longer, "the relay's --dedup-window-ms 4000 is longer than the cluster's dedup window of 3000 ms");
    expect((await tc.client.read('window:a')).total).toBe(0n);
    expect((await tc.client.clusterStatus()).dedupWindowMs).toBe(dedupWindowMs);
    // Equal (or shorter) is fine: the row counts.
    const equal = await run('relay', ['--table', 'window_outbox', '--once']);
    expect(equal.code, equal.stderr).toBe(0);
    expect((await tc.client.read('window:a')).total).toBe(1n);
  }, 30_000);

  it('recount --repair: a repair that timed out and lands after a second repair is deduplicated, not applied twice', async () => {
    expect((await run('relay', ['--create-table', '--table', 'late_outbox', '--archive-table', 'late_archive'])).code).toBe(0);
    const relayArgs = ['--table', 'late_outbox', '--archive-table', 'late_archive', '--once'];
    await pg.query(`INSERT INTO late_outbox (counter, amount) SELECT 'late:1', g FROM generate_series(1, 10) AS g`);
    expect((await run('relay', relayArgs)).code).toBe(0);
    await tc.client.increment('late:1', 7n);
    // The first repair's call times out at the caller while its request is still on its way.
    const settings = parseRelayConfig(
      new Map([
        ['archive-table', 'late_archive'],
        ['table', 'late_outbox'],
        ...[['dedup-window-ms', String(dedupWindowMs)] as [string, string]],
      ]),
      {
        TALLY_POSTGRES: pg.url,
      },
    );
    let held: { counter: string; amount: bigint; options: IncrementOptions | undefined } | undefined;
    const timingOut = {
      incrementBatch: tc.client.incrementBatch.bind(tc.client),
      read: tc.client.read.bind(tc.client),
      readMany: tc.client.readMany.bind(tc.client),
      increment(counter: string, amount: bigint, options?: IncrementOptions): Promise<never> {
        held = { counter, amount, options };
        return Promise.reject(new TallyError(ErrorCode.deadlineExceeded, 'deadline exceeded (the call is still on its way)'));
      },
    };
    const outbox = await Outbox.open(settings, 'late-repair test');
    try {
      await expect(recount(outbox, timingOut, 'late:1', { repair: true, dedupWindowMs })).rejects.toMatchObject({
        code: 'deadline_exceeded',
      });
    } finally {
      await outbox.close();
    }
    expect(held?.amount).toBe(-7n);
    // Meanwhile more rows are relayed (the archive moves), and a second repair runs and applies.
    await pg.query(`INSERT INTO late_outbox (counter, amount) VALUES ('late:1', 100)`);
    expect((await run('relay', relayArgs)).code).toBe(0);
    const second = await run('recount', ['late:1', '--table', 'late_outbox', '--archive-table', 'late_archive', '--repair']);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('repaired: applied -7');
    // The first repair lands late: Tally must take it for a duplicate.
    const late = await tc.client.increment(held!.counter, held!.amount, held!.options);
    expect(late.applied).toBe(false);
    expect((await tc.client.read('late:1')).total).toBe(155n);
    const check = await run('recount', ['late:1', '--table', 'late_outbox', '--archive-table', 'late_archive']);
    expect(check.stdout).toContain('drift 0: in agreement');
  }, 40_000);

  it('ids reused after an identity reset or a recreated outbox are detected and the relay halts naming the rows, never dropping them as duplicates', async () => {
    // A cluster of its own with the default (24 h) window: Tally remembers every key this test sends.
    const own = await startCluster({ pairs: 1 });
    const run = (command: string, args: string[]): Promise<CliResult> =>
      tally([command, ...args, '--router', own.cluster.routerAddress], { TALLY_POSTGRES: pg.url });
    const tc = { client: own.client };
    try {
      // No archive: relayed rows are deleted, and nothing but the relay's checks remembers their ids.
      const tables = ['--table', 'reuse_outbox'];
      expect((await run('relay', ['--create-table', ...tables])).code).toBe(0);
      // A restart before any row was sent repeats no id: the relay records the new sequence and goes on.
      expect((await run('relay', [...tables, '--once'])).code).toBe(0);
      await pg.query('TRUNCATE reuse_outbox RESTART IDENTITY');
      await pg.query(`INSERT INTO reuse_outbox (counter, amount) VALUES ('reuse:a', 1), ('reuse:a', 2), ('reuse:a', 3)`);
      expect((await run('relay', [...tables, '--once'])).code).toBe(0);
      expect((await tc.client.read('reuse:a')).total).toBe(6n);
      // The identity restarts: new rows take ids 1 and 2, whose keys Tally still holds.
      await pg.query('TRUNCATE reuse_outbox RESTART IDENTITY');
      await pg.query(`INSERT INTO reuse_outbox (counter, amount) VALUES ('reuse:a', 10), ('reuse:a', 20)`);
      const reset = await run('relay', [...tables, '--once']);
      expectOneLineFailure(reset, 'rows 1, 2 of reuse_outbox');
      expect(reset.stderr).toContain('--key-namespace');
      expect((await tc.client.read('reuse:a')).total).toBe(6n);
      expect(await pg.query('SELECT count(*)::int AS n FROM reuse_outbox')).toEqual([{ n: 2 }]);
      // Reset again while no relay runs, and the service inserts past the highest id sent before one
      // looks: the sequence is no longer behind, but it is a new one (a restart gives it a new relfilenode).
      await pg.query('TRUNCATE reuse_outbox RESTART IDENTITY');
      await pg.query(`INSERT INTO reuse_outbox (counter, amount) SELECT 'reuse:a', 100 * g FROM generate_series(1, 5) AS g`);
      const past = await run('relay', [...tables, '--once']);
      expectOneLineFailure(past, 'rows 1, 2, 3 of reuse_outbox');
      expect(past.stderr).toContain('was restarted');
      expect((await tc.client.read('reuse:a')).total).toBe(6n);
      expect(await pg.query('SELECT count(*)::int AS n FROM reuse_outbox')).toEqual([{ n: 5 }]);
      // A new key namespace gives the rows new keys: they count.
      const fresh = await run('relay', [...tables, '--once', '--key-namespace', 'shop.reuse.2']);
      expect(fresh.code, fresh.stderr).toBe(0);
      expect((await tc.client.read('reuse:a')).total).toBe(1506n);
      // A dropped and recreated outbox (its relay tables kept) is another table: the relay halts.
      await pg.query('DROP TABLE reuse_outbox');
      expect((await run('relay', ['--create-table', ...tables])).code).toBe(0);
      await pg.query(`INSERT INTO reuse_outbox (counter, amount) VALUES ('reuse:a', 7)`);
      const recreated = await run('relay', [...tables, '--once', '--key-namespace', 'shop.reuse.2']);
      expectOneLineFailure(recreated, 'reuse_outbox is not the table the relay sent rows of');
      expect((await tc.client.read('reuse:a')).total).toBe(1506n);
    } finally {
      await own.stop();
    }
  }, 60_000);

  it('relay --reconcile-every: recounts the counters it relayed in the background and exports the drift a direct Increment made', async () => {
    expect((await run('relay', ['--create-table', '--table', 'watch_outbox', '--archive-table', 'watch_archive'])).code).toBe(0);
    await pg.query(`INSERT INTO watch_outbox (counter, amount) VALUES ('watch:a', 3), ('watch:b', 4), ('watch:a', 5)`);
    const relay = spawnRelay(
      [
        '--table',
        'watch_outbox',
        '--archive-table',
        'watch_archive',
        '--reconcile-every',
        '1s',
        '--metrics-port',
        'any',
        ...tallyArgs,
        ...windowArgs,
      ],
      { TALLY_POSTGRES: pg.url },
    );
    try {
      await waitFor(
        async () => relay.metricsPort !== undefined && (await scrapeMetric(relay.metricsPort, 'tally_relay_reconciles_total')) >= 1,
        {
          timeoutMs: 15_000,
          what: 'a background recount',
        },
      );
      expect(await scrapeMetric(relay.metricsPort!, 'tally_relay_counters_drifting')).toBe(0);
      await tc.client.increment('watch:b', -2n);
      await waitFor(async () => (await scrapeMetric(relay.metricsPort!, 'tally_relay_counters_drifting')) === 1, { timeoutMs: 10_000 });
      expect(await scrapeMetric(relay.metricsPort!, 'tally_relay_drift', { counter: 'watch:b' })).toBe(-2);
    } finally {
      await relay.kill('SIGTERM');
    }
  }, 30_000);

  it('compose: the relay service starts with settings tally relay accepts, and Prometheus scrapes its metrics port', () => {
    const normalized = execFileSync('docker-compose', ['-f', path.join(repoRoot, 'docker-compose.yml'), 'config'], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    const services = (parseYaml(normalized) as { services: Record<string, { environment?: Record<string, string>; profiles?: string[] }> })
      .services;
    const relay = services.relay!;
    expect(relay.profiles).toEqual(['outbox']);
    const config = parseRelayConfig(new Map(), { ...relay.environment });
    expect(config.metricsHost).toBe('0.0.0.0');
    expect(config.tables.archive).toBeDefined();
    expect(new URL(config.url).hostname).toBe('postgres');
    expect(services.postgres!.profiles).toEqual(['outbox']);
    const scrape = parseYaml(fs.readFileSync(path.join(repoRoot, 'deploy/prometheus/prometheus.yml'), 'utf8')) as {
      scrape_configs: { static_configs: { targets: string[] }[] }[];
    };
    const targets = scrape.scrape_configs.flatMap((job) => job.static_configs.flatMap((target) => target.targets));
    expect(targets).toContain(`relay:${config.metricsPort}`);
  });

  it('kubernetes: the relay example renders with the base kit; its Deployment passes the schema, has probes and requests, and settings tally relay accepts', async () => {
    const text = execFileSync('kubectl', ['kustomize', path.join(repoRoot, 'deploy/kubernetes/examples/outbox-relay')], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    const objects = parseAllDocuments(text)
      .map(
        (document) =>
          document.toJS() as {
            apiVersion: string;
            kind: string;
            metadata: { name: string; namespace?: string };
            data?: Record<string, string>;
            spec?: { template: { spec: { containers: RelayContainer[] } } };
          },
      )
      .filter((object) => object !== null);
    const deployment = objects.find((object) => object.kind === 'Deployment' && object.metadata.name === 'tally-relay')!;
    const configMap = objects.find((object) => object.kind === 'ConfigMap' && object.metadata.name.startsWith('tally-relay-'))!;
    for (const object of [deployment, configMap]) {
      const modulePath = `kubernetes-models/${object.apiVersion}/${object.kind}`;
      const model = (await import(modulePath)) as Record<string, new (data: unknown) => { validate(): void }>;
      expect(() => new model[object.kind]!(object).validate(), object.kind).not.toThrow();
      expect(object.metadata.namespace).toBe('tally');
    }
    const container = deployment.spec!.template.spec.containers[0]!;
    expect(container.args).toEqual(['relay']);
    expect(container.envFrom[0]!.configMapRef.name).toBe(configMap.metadata.name);
    expect(container.readinessProbe.httpGet.port).toBe(9470);
    expect(container.livenessProbe.httpGet.port).toBe(9470);
    expect(Object.keys(container.resources.requests).sort()).toEqual(['cpu', 'memory']);
    const config = parseRelayConfig(new Map(), {
      ...configMap.data,
      TALLY_POSTGRES: 'postgresql://relay@db:5432/shop',
      TALLY_RELAY_ID: 'tally-relay-0',
    });
    expect(config.metricsPort).toBe(9470);
    expect(config.tables.archive).toBeDefined();
    expect(configMap.data!.TALLY_ROUTER).toBe('tally:50051');
  });
});
