// The relay's SQL over the outbox: claim rows (FOR UPDATE SKIP LOCKED under
// the shared advisory lock), stamp first sends, and finish a batch (archive
// or delete, dead letters) in the claiming transaction. Sends nothing to Tally.
import pg from 'pg';
import type { PostgresSettings } from '../config.ts';
import { outboxLockKey, prepareTables, sqlName } from './outbox-schema.ts';
import { RelayError, RelayErrorCode, describeUrl, oneLine } from '../relay-error.ts';
import type { IdentityFinding } from './outbox-identity.ts';
import type { OutboxRow } from './row-check.ts';

/** A row leaving the outbox for the dead letters, and why. */
export interface DeadRow {
  id: bigint;
  reason: string;
  /** The directory cap that refused the row (reason cap_exceeded), for tally_relay_cap_refusals_total. */
  cap?: string;
}

interface RawRow {
  id: string;
  counter: string | null;
  amount: string | null;
  age_ms: number;
  attempt_age_ms: number | null;
}

/** The same SELECT list for every claim: ages on PostgreSQL's clock, int8 as text. */
function rowsSelect(outbox: string, attempts: string): string {
  return `SELECT o.id::text AS id, o.counter, o.amount::text AS amount,
    (extract(epoch FROM clock_timestamp() - o.created_at) * 1000)::float8 AS age_ms,
    (extract(epoch FROM clock_timestamp() - a.first_attempt_at) * 1000)::float8 AS attempt_age_ms
  FROM ${outbox} o LEFT JOIN ${attempts} a ON a.id = o.id`;
}

function toRow(raw: RawRow): OutboxRow {
  return {
    id: BigInt(raw.id),
    counter: raw.counter,
    amount: raw.amount === null ? null : BigInt(raw.amount),
    ageMs: raw.age_ms,
    attemptAgeMs: raw.attempt_age_ms,
  };
}

/** Opens a connection, turning a failure into one line that names the server, not the password. */
export async function connectPostgres(url: string, applicationName: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    application_name: applicationName,
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
  });
  // A dropped connection is reported by the query that fails on it; this only keeps an idle drop from crashing the process.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {});
    throw new RelayError(RelayErrorCode.connect, `cannot connect to PostgreSQL at ${describeUrl(url)}: ${oneLine(error)}`);
  }
  return client;
}

/**
 * One connection's view of the outbox. A relay holds two: one for the
 * claiming transaction, one (autocommit) for stamping first sends, which
 * must be durable before a send whatever happens to the claim.
 */
export class Outbox {
  private readonly outbox: string;
  private readonly attempts: string;
  private readonly deadLetters: string;
  private readonly archive: string | undefined;
  private readonly repairs: string;
  private readonly identity: string;
  readonly lockKey: string;

  private constructor(
    readonly client: pg.Client,
    readonly settings: PostgresSettings,
    readonly keyNamespace: string,
    oid: number,
  ) {
    this.outbox = sqlName(settings.tables.outbox);
    this.attempts = sqlName(settings.tables.attempts);
    this.deadLetters = sqlName(settings.tables.deadLetters);
    this.archive = settings.tables.archive === undefined ? undefined : sqlName(settings.tables.archive);
    this.repairs = sqlName(settings.tables.repairs);
    this.identity = sqlName(settings.tables.identity);
    this.lockKey = outboxLockKey(oid).toString();
  }

  /** Connects, checks the outbox and creates the relay's tables if absent. */
  static async open(settings: PostgresSettings, applicationName: string): Promise<Outbox> {
    const client = await connectPostgres(settings.url, applicationName);
    try {
      const resolved = await prepareTables(client, settings.tables);
      return new Outbox(client, settings, settings.keyNamespace ?? resolved.qualifiedName, resolved.oid);
    } catch (error) {
      await client.end().catch(() => {});
      throw error instanceof RelayError
        ? error
        : new RelayError(RelayErrorCode.schema, `cannot prepare the outbox tables: ${oneLine(error)}`);
    }
  }

  /**
   * Begins a transaction holding the shared lock and the first rowCount
   * committed rows no other relay holds, in id order. One round trip: the
   * statements have no parameters (rowCount is a checked integer).
   */
  async claim(rowCount: number): Promise<OutboxRow[]> {
    if (!Number.isSafeInteger(rowCount) || rowCount < 1) throw new Error(`claim: bad row count ${rowCount}`);
    const results = (await this.client.query(
      `BEGIN; SELECT pg_advisory_xact_lock_shared(${this.lockKey});
       ${rowsSelect(this.outbox, this.attempts)} ORDER BY o.id LIMIT ${rowCount} FOR UPDATE OF o SKIP LOCKED`,
    )) as unknown as pg.QueryResult<RawRow>[];
    return results[2]!.rows.map(toRow);
  }

  /** Begins the recount's transaction: the exclusive lock waits out every relay batch in flight and holds off new ones. */
  async beginExclusive(): Promise<void> {
    await this.client.query(`BEGIN; SELECT pg_advisory_xact_lock(${this.lockKey})`);
  }

  /** Rows of these counters that were sent but not finished (fate unknown), locked; inside beginExclusive. */
  async claimUnfinished(counters: readonly string[], rowCountMax: number): Promise<OutboxRow[]> {
    const result = await this.client.query<RawRow>(
      `${rowsSelect(this.outbox, this.attempts)} WHERE a.id IS NOT NULL AND o.counter = ANY($1::text[]) ORDER BY o.id LIMIT $2 FOR UPDATE OF o`,
      [counters, rowCountMax],
    );
    return result.rows.map(toRow);
  }

  /** Outbox rows with a first send older than limitMs (autocommit, no lock): what a halted relay waits on. */
  async rowsSentBefore(limitMs: number, rowCountMax: number): Promise<OutboxRow[]> {
    const result = await this.client.query<RawRow>(
      `${rowsSelect(this.outbox, this.attempts)} WHERE a.first_attempt_at < clock_timestamp() - $1 * interval '1 millisecond' ORDER BY o.id LIMIT $2`,
      [limitMs, rowCountMax],
    );
    return result.rows.map(toRow);
  }

  /**
   * Stamps the first send of each row not yet stamped, and raises the
   * namespace's highest id sent; committed before this returns (autocommit
   * connection), so before the send.
   */
  async recordFirstSends(ids: readonly bigint[]): Promise<void> {
    if (ids.length === 0) return;
    await this.client.query(
      `WITH stamped AS (
         INSERT INTO ${this.attempts} (id, first_attempt_at) SELECT unnest($1::bigint[]), clock_timestamp() ON CONFLICT (id) DO NOTHING RETURNING 1)
       UPDATE ${this.identity} SET id_high_water = greatest(id_high_water, (SELECT max(id) FROM unnest($1::bigint[]) AS id))
        WHERE key_namespace = $2`,
      [ids.map(String), this.keyNamespace],
    );
  }

  /**
   * The outbox's identity now beside the one recorded for this key namespace
   * (recorded now if none was, or if no row was sent under it yet: no id can
   * repeat one never sent), the highest id sent, and the id sequence's last
   * value where there is one the relay may read. Autocommit.
   */
  async identityFinding(): Promise<IdentityFinding> {
    const result = await this.client.query<{
      current_system: string;
      current_oid: string | null;
      recorded_system: string;
      recorded_oid: string;
      current_filenode: string | null;
      recorded_filenode: string | null;
      high_water: string;
      has_sequence: boolean;
      sequence_last: string | null;
    }>(
      `WITH cur AS (
         SELECT (SELECT system_identifier::text FROM pg_control_system()) AS system_identifier,
           to_regclass($2)::oid::int8 AS outbox_oid, pg_get_serial_sequence($2, 'id') AS seq),
       cur_seq AS (
         SELECT cur.*, (SELECT relfilenode::int8 FROM pg_class WHERE oid = to_regclass(cur.seq)) AS seq_filenode FROM cur),
       ins AS (
         INSERT INTO ${this.identity} AS held (key_namespace, system_identifier, outbox_oid, sequence_filenode, id_high_water, recorded_at)
         SELECT $1, system_identifier, outbox_oid, seq_filenode, 0, clock_timestamp() FROM cur_seq WHERE outbox_oid IS NOT NULL
         ON CONFLICT (key_namespace) DO UPDATE SET system_identifier = excluded.system_identifier, outbox_oid = excluded.outbox_oid,
           sequence_filenode = excluded.sequence_filenode, recorded_at = excluded.recorded_at
         WHERE held.id_high_water = 0
           AND (held.system_identifier, held.outbox_oid, held.sequence_filenode)
             IS DISTINCT FROM (excluded.system_identifier, excluded.outbox_oid, excluded.sequence_filenode)
         RETURNING system_identifier, outbox_oid, sequence_filenode, id_high_water),
       rec AS (
         SELECT system_identifier, outbox_oid, sequence_filenode, id_high_water, 0 AS newer FROM ins
         UNION ALL SELECT system_identifier, outbox_oid, sequence_filenode, id_high_water, 1 FROM ${this.identity} WHERE key_namespace = $1)
       SELECT cur.system_identifier AS current_system, cur.outbox_oid::text AS current_oid,
         rec.system_identifier AS recorded_system, rec.outbox_oid::text AS recorded_oid, rec.id_high_water::text AS high_water,
         cur.seq_filenode::text AS current_filenode, rec.sequence_filenode::text AS recorded_filenode,
         cur.seq IS NOT NULL AND has_sequence_privilege(cur.seq, 'SELECT,USAGE') AS has_sequence,
         CASE WHEN cur.seq IS NOT NULL AND has_sequence_privilege(cur.seq, 'SELECT,USAGE')
           THEN pg_sequence_last_value(cur.seq::regclass)::text END AS sequence_last
       FROM cur_seq AS cur, rec ORDER BY rec.newer LIMIT 1`,
      [this.keyNamespace, this.outbox],
    );
    const row = result.rows[0];
    if (row === undefined || row.current_oid === null)
      throw new RelayError(RelayErrorCode.schema, `table ${this.settings.tables.outbox.name} does not exist`);
    return {
      recorded: { systemIdentifier: row.recorded_system, outboxOid: row.recorded_oid, sequenceFilenode: row.recorded_filenode },
      current: { systemIdentifier: row.current_system, outboxOid: row.current_oid, sequenceFilenode: row.current_filenode },
      idHighWater: BigInt(row.high_water),
      sequenceLastValue: !row.has_sequence ? undefined : row.sequence_last === null ? null : BigInt(row.sequence_last),
    };
  }

  /** Ids in the outbox at or below idMax, lowest first, at most rowCountMax + 1 (the halt names some, counts the rest). */
  async idsUpTo(idMax: bigint, rowCountMax: number): Promise<bigint[]> {
    const result = await this.client.query<{ id: string }>(
      `SELECT id::text AS id FROM ${this.outbox} WHERE id <= $1 ORDER BY id LIMIT $2`,
      [String(idMax), rowCountMax + 1],
    );
    return result.rows.map((row) => BigInt(row.id));
  }

  /**
   * Inside the claiming transaction: takes relayed rows out of the outbox
   * (into the archive when there is one) and dead rows into the dead
   * letters, and forgets their first sends. The caller commits.
   */
  async takeOut(relayedIds: readonly bigint[], dead: readonly DeadRow[]): Promise<void> {
    const allIds = [...relayedIds, ...dead.map((row) => row.id)].map(String);
    const deadIds = dead.map((row) => String(row.id));
    const archived =
      this.archive === undefined
        ? ''
        : `, archived AS (INSERT INTO ${this.archive} (id, counter, amount, created_at, relayed_at)
             SELECT id, counter, amount, created_at, clock_timestamp() FROM done WHERE id <> ALL($2::bigint[]) RETURNING 1)`;
    const result = await this.client.query<{ done: string }>(
      `WITH done AS (DELETE FROM ${this.outbox} WHERE id = ANY($1::bigint[]) RETURNING id, counter, amount, created_at)${archived},
         dead AS (INSERT INTO ${this.deadLetters} (id, counter, amount, created_at, reason, dead_at)
           SELECT d.id, d.counter, d.amount, d.created_at, r.reason, clock_timestamp()
           FROM done d JOIN unnest($2::bigint[], $3::text[]) AS r(id, reason) ON r.id = d.id RETURNING 1),
         forgotten AS (DELETE FROM ${this.attempts} WHERE id = ANY($1::bigint[]) RETURNING 1)
       SELECT count(*)::text AS done FROM done`,
      [allIds, deadIds, dead.map((row) => row.reason)],
    );
    // The rows are locked by this transaction: each must still be there to take out.
    if (Number(result.rows[0]!.done) !== allIds.length) {
      await this.rollback();
      throw new Error(`takeOut: took ${result.rows[0]!.done} of ${allIds.length} claimed rows out of the outbox`);
    }
  }

  async commit(): Promise<void> {
    await this.client.query('COMMIT');
  }

  /** Ends the transaction if one is open; a dead connection has ended it already. */
  async rollback(): Promise<void> {
    await this.client.query('ROLLBACK').catch(() => {});
  }

  /** Inside a transaction: the archived rows' count and sum per counter (every counter asked for, 0 if none). */
  async archivedSums(counters: readonly string[]): Promise<Map<string, { rows: bigint; sum: bigint }>> {
    if (this.archive === undefined) throw new RelayError(RelayErrorCode.invalid, 'a recount needs --archive-table');
    const result = await this.client.query<{ counter: string; rows: string; sum: string }>(
      `SELECT counter, count(*)::text AS rows, coalesce(sum(amount), 0)::text AS sum FROM ${this.archive}
        WHERE counter = ANY($1::text[]) GROUP BY counter`,
      [counters],
    );
    const sums = new Map(counters.map((counter) => [counter, { rows: 0n, sum: 0n }]));
    for (const row of result.rows) sums.set(row.counter, { rows: BigInt(row.rows), sum: BigInt(row.sum) });
    return sums;
  }

  /** Inside the recount's exclusive transaction: the number the counter's next repair takes under this namespace (0 for the first). */
  async nextRepairNumber(counter: string): Promise<bigint> {
    const result = await this.client.query<{ next: string }>(
      `SELECT coalesce(max(repair_number) + 1, 0)::text AS next FROM ${this.repairs} WHERE key_namespace = $1 AND counter = $2`,
      [this.keyNamespace, counter],
    );
    return BigInt(result.rows[0]!.next);
  }

  /** Inside the recount's transaction: a repair Tally answered (applied, or a duplicate of an earlier one under its key). */
  async recordRepair(counter: string, repairNumber: bigint, amount: bigint, applied: boolean): Promise<void> {
    await this.client.query(
      `INSERT INTO ${this.repairs} (key_namespace, counter, repair_number, amount, applied, repaired_at) VALUES ($1, $2, $3, $4, $5, clock_timestamp())`,
      [this.keyNamespace, counter, String(repairNumber), String(amount), applied],
    );
  }

  /** Rows waiting (a count over the outbox) and the age of the lowest id's row: the lag gauges. */
  async pending(): Promise<{ rows: number; oldestAgeSeconds: number }> {
    const result = await this.client.query<{ rows: string; age: number | null }>(
      `SELECT (SELECT count(*) FROM ${this.outbox})::text AS rows,
        (SELECT extract(epoch FROM clock_timestamp() - created_at)::float8 FROM ${this.outbox} ORDER BY id LIMIT 1) AS age`,
    );
    return { rows: Number(result.rows[0]!.rows), oldestAgeSeconds: result.rows[0]!.age ?? 0 };
  }

  /** Resolve, inside the exclusive transaction, committing it: the named rows out (archive or dead letters), or only their first-send stamps. */
  async resolveRows(ids: readonly bigint[], choice: 'counted' | 'resend' | 'dead-letter'): Promise<number> {
    const idTexts = ids.map(String);
    if (choice === 'resend') {
      const result = await this.client.query(`DELETE FROM ${this.attempts} WHERE id = ANY($1::bigint[])`, [idTexts]);
      await this.commit();
      return result.rowCount ?? 0;
    }
    if (choice === 'dead-letter') {
      await this.takeOut(
        [],
        ids.map((id) => ({ id, reason: 'beyond_window: first sent longer ago than the dedup window; fate unknown' })),
      );
    } else {
      await this.takeOut(ids, []);
    }
    await this.commit();
    return ids.length;
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => {});
  }
}
