// The outbox relay's recount (G12) against a real PostgreSQL and real Tally
// processes: drift found and repaired once, a late repair deduplicated, the
// background reconcile, and reused row ids refused. The relay's sending is in
// outbox.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, TallyError } from '../../src/wire/index.ts';
import type { IncrementOptions } from '../../src/client/index.ts';
import { parseRelayConfig } from '../../src/relay/index.ts';
import { Outbox } from '../../src/relay/outbox/outbox.ts';
import { recount } from '../../src/relay/recount.ts';
import { scrapeMetric, startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';
import { tally, type CliResult } from '../helpers/cli.ts';
import type { TestPostgres } from '../helpers/postgres.ts';
import { spawnRelay } from '../helpers/relay-process.ts';
import {
  expectOneLineFailure,
  outboxDedupWindowMs as dedupWindowMs,
  outboxWindowArgs as windowArgs,
  startOutboxEnvironment,
} from '../helpers/outbox.ts';

describe('outbox relay: recount and reused ids', () => {
  let tc: TestCluster;
  let pg: TestPostgres;
  let tallyArgs: string[];
  beforeAll(async () => {
    ({ tc, pg, tallyArgs } = await startOutboxEnvironment());
  }, 60_000);
  afterAll(async () => {
    await Promise.all([tc?.stop(), pg?.stop()]);
  });

  /** tally relay/recount against this file's cluster and database. */
  const run = (command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> =>
    tally([command, ...args, ...tallyArgs, ...windowArgs], { TALLY_POSTGRES: pg.url, ...env });

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
});
