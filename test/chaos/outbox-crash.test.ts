// G12 under attack: services write orders and outbox rows in one PostgreSQL
// transaction (some rolled back) while two relays are SIGKILLed at random
// moments (often in the window between Tally's acknowledgement and their
// commit), a Tally primary and the router are SIGKILLed (the router while
// batches are on their way through it) and PostgreSQL is crashed and
// restarted once. The orders table, not the relay's own tables, is the truth.
import { afterAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { pause, startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';
import { tally } from '../helpers/cli.ts';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { spawnRelay, type RelayProcess } from '../helpers/relay-process.ts';
import { seededRandom } from '../helpers/seeded-random.ts';

const counterCount = 6;
const writerCount = 3;
const relayCount = 2;
const chaosMs = 12_000;

describe('chaos: outbox relay', () => {
  let tc: TestCluster | undefined;
  let db: TestPostgres | undefined;
  afterAll(async () => {
    await Promise.all([tc?.stop(), db?.stop()]);
  });

  it('with relays SIGKILLed (also between the ack and the commit), a primary and the router SIGKILLed and PostgreSQL restarted, every counter equals its committed rows', async () => {
    const seed = Number(process.env.TALLY_CHAOS_SEED ?? Date.now() % 100_000);
    const random = seededRandom(seed);
    [tc, db] = await Promise.all([startCluster({ pairs: 2 }), startPostgres()]);
    const { client } = tc;
    const router = tc.cluster.routerAddress;
    const postgres = db;
    const env = { TALLY_POSTGRES: postgres.url };
    const created = await tally(['relay', '--create-table', '--table', 'crash_outbox', '--archive-table', 'crash_archive'], env);
    expect(created.code, created.stderr).toBe(0);
    await postgres.query(
      'CREATE TABLE orders (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, counter text NOT NULL, amount bigint NOT NULL)',
    );
    // Spread the counters over both pairs, so the killed primary holds some of their shards (a first,
    // direct increment of 1 creates each: the reads at the end expect it).
    for (let index = 0; index < counterCount; index++) {
      await client.increment(`crash:${index}`, 1);
      await client.setShards(`crash:${index}`, 2);
    }

    let stopping = false;
    let committed = 0;
    let rolledBack = 0;
    let writeErrors = 0;
    const writer = async (writerIndex: number): Promise<void> => {
      let connection: pg.Client | undefined;
      while (!stopping) {
        try {
          connection ??= await postgres.connect();
          const rows = Array.from({ length: 1 + Math.floor(random() * 4) }, () => ({
            counter: `crash:${Math.floor(random() * counterCount)}`,
            amount: String((Math.floor(random() * 150) - 49) | 1),
          }));
          const values = rows.map((_, index) => `($${index * 2 + 1}, $${index * 2 + 2})`).join(', ');
          const parameters = rows.flatMap((row) => [row.counter, row.amount]);
          await connection.query('BEGIN');
          await connection.query(`INSERT INTO orders (counter, amount) VALUES ${values}`, parameters);
          await connection.query(`INSERT INTO crash_outbox (counter, amount) VALUES ${values}`, parameters);
          if (random() < 0.2) {
            await connection.query('ROLLBACK');
            rolledBack++;
          } else {
            await connection.query('COMMIT');
            committed++;
          }
        } catch {
          // PostgreSQL restarting: whether a COMMIT in flight took is for the orders table to say.
          writeErrors++;
          await connection?.end().catch(() => {});
          connection = undefined;
          await pause(100);
        }
        await pause(5 + writerIndex);
      }
      await connection?.end().catch(() => {});
    };

    // Each relay slot restarts its relay whenever it dies (as a supervisor would).
    const relays: (RelayProcess | undefined)[] = Array.from({ length: relayCount }, () => undefined);
    let relayStarts = 0;
    const supervise = async (slot: number): Promise<void> => {
      while (!stopping) {
        const relay = spawnRelay(
          [
            '--table',
            'crash_outbox',
            '--archive-table',
            'crash_archive',
            '--batch',
            '40',
            '--metrics-port',
            '0',
            '--router',
            router,
            '--relay-id',
            `r${slot}`,
          ],
          { ...env, TALLY_RELAY_TEST_HOOK: 'pause-after-ack:60' },
        );
        relays[slot] = relay;
        relayStarts++;
        await relay.exited;
        await pause(100);
      }
    };

    let killsAfterAck = 0;
    let killsAtRandom = 0;
    let routerKills = 0;
    const chaos = async (): Promise<void> => {
      const startedMs = performance.now();
      let primaryKilled = false;
      let routerKilled = false;
      let postgresRestarted = false;
      while (performance.now() - startedMs < chaosMs) {
        await pause(250 + random() * 500);
        const elapsedMs = performance.now() - startedMs;
        if (!primaryKilled && elapsedMs > chaosMs * 0.25) {
          primaryKilled = true;
          const primary = tc!.cluster.node(1, 'primary').process;
          await primary.stop('SIGKILL');
          void pause(1_500).then(() => primary.start());
          continue;
        }
        if (!routerKilled && elapsedMs > chaosMs * 0.45) {
          // While the relays are busy: one has just had a batch acknowledged and is about to send its next.
          routerKilled = true;
          const relay = relays[Math.floor(random() * relayCount)];
          const from = relay?.stderr().length ?? 0;
          await relay?.waitForLine('relay test hook: acknowledged', { from, timeoutMs: 2_000 }).catch(() => {});
          await tc!.cluster.router.stop('SIGKILL');
          routerKills++;
          void pause(1_000).then(() => tc!.cluster.router.start());
          continue;
        }
        if (!postgresRestarted && elapsedMs > chaosMs * 0.7) {
          postgresRestarted = true;
          await postgres.restart();
          continue;
        }
        const relay = relays[Math.floor(random() * relayCount)];
        if (relay === undefined) continue;
        if (random() < 0.6) {
          // Into the window: after Tally acknowledged a batch, before PostgreSQL committed it.
          const from = relay.stderr().length;
          const hit = await relay.waitForLine('pausing before the commit', { from, timeoutMs: 2_000 }).then(
            () => true,
            () => false,
          );
          if (hit) {
            await relay.kill('SIGKILL');
            killsAfterAck++;
          }
        } else {
          await relay.kill('SIGKILL');
          killsAtRandom++;
        }
      }
      // A slow machine may have let every try above miss the window (the
      // relays stalled by the primary's kill or PostgreSQL's restart): the
      // kill after an acknowledgement is the point, so keep trying while the
      // writers still write, a bounded number of times.
      for (let tries = 0; killsAfterAck === 0 && tries < 10; tries++) {
        const relay = relays[tries % relayCount];
        if (relay === undefined) {
          await pause(200);
          continue;
        }
        const from = relay.stderr().length;
        if (
          await relay.waitForLine('pausing before the commit', { from, timeoutMs: 3_000 }).then(
            () => true,
            () => false,
          )
        ) {
          await relay.kill('SIGKILL');
          killsAfterAck++;
        }
      }
    };

    const writers = Array.from({ length: writerCount }, (_, index) => writer(index));
    const supervisors = Array.from({ length: relayCount }, (_, slot) => supervise(slot));
    await chaos();
    stopping = true;
    await Promise.all(writers);
    // Let the last relays drain the outbox, then stop them.
    const drained = await waitFor(
      async () => (await postgres.query<{ n: number }>('SELECT count(*)::int AS n FROM crash_outbox'))[0]!.n === 0,
      {
        timeoutMs: 30_000,
        what: `the outbox to drain (seed ${seed}; relay: ${relays.map((relay) => relay?.stderr().slice(-300)).join(' | ')})`,
      },
    ).catch((error: unknown) => error);
    await Promise.all(relays.map((relay) => relay?.kill('SIGTERM')));
    await Promise.all(supervisors);
    expect(drained, `seed ${seed}`).toBe(true);

    const truth = await postgres.query<{ counter: string; total: string }>(
      'SELECT counter, sum(amount)::text AS total FROM orders GROUP BY counter',
    );
    const archived = await postgres.query<{ counter: string; total: string }>(
      'SELECT counter, sum(amount)::text AS total FROM crash_archive GROUP BY counter',
    );
    expect(await postgres.query('SELECT count(*)::int AS n FROM crash_outbox_dead_letters')).toEqual([{ n: 0 }]);
    const context = `seed ${seed}; ${committed} commits, ${rolledBack} rollbacks, ${writeErrors} write errors; relay kills ${killsAfterAck} after ack, ${killsAtRandom} at random; ${routerKills} router kills; ${relayStarts} relay starts`;
    expect(truth.length, context).toBe(counterCount);
    expect(new Map(archived.map((row) => [row.counter, row.total])), context).toEqual(
      new Map(truth.map((row) => [row.counter, row.total])),
    );
    const reads = await waitFor(() => client.readMany(truth.map((row) => row.counter)), { timeoutMs: 10_000, what: 'exact reads' });
    expect(new Map(reads.map((read) => [read.counter, read.total])), context).toEqual(
      new Map(truth.map((row) => [row.counter, BigInt(row.total) + 1n])),
    );
    expect(killsAfterAck, context).toBeGreaterThan(0);
    expect(routerKills, context).toBe(1);
    expect(rolledBack, context).toBeGreaterThan(0);
  }, 90_000);
});
