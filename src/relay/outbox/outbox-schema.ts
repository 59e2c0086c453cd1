// The outbox's tables in PostgreSQL: their documented shape (DDL for
// `--create-table`), the relay's own tables beside it, and the startup check
// that a user's table has the columns the relay reads. No row traffic here.
import type pg from 'pg';
import { formatTableName, type OutboxTables, type TableName } from '../config.ts';
import { RelayError, RelayErrorCode } from '../relay-error.ts';

/** A validated table name, quoted for SQL (config.ts allows only [a-z0-9_] identifiers). */
export function sqlName(table: TableName): string {
  return table.schema === undefined ? `"${table.name}"` : `"${table.schema}"."${table.name}"`;
}

/** 'tall' in ASCII: the high half of the relay's advisory lock key; the low half is the outbox's oid. */
const lockKeyHigh = 0x74616c6cn;

/**
 * The advisory lock that separates relaying from recounting: each relay
 * batch holds it shared from claim to commit; a recount holds it exclusive,
 * so at its read no row is between Tally's acknowledgement and its archive.
 */
export function outboxLockKey(outboxOid: number): bigint {
  return (lockKeyHigh << 32n) | BigInt(outboxOid);
}

/** The outbox as documented in docs/outbox.md. */
export function outboxTableDdl(table: TableName): string {
  return `CREATE TABLE IF NOT EXISTS ${sqlName(table)} (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  counter text NOT NULL,
  amount bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
)`;
}

/** The relay's own tables: attempts and dead letters always, the archive when asked for. */
function relayTablesDdl(tables: OutboxTables): string[] {
  const statements = [
    `CREATE TABLE IF NOT EXISTS ${sqlName(tables.attempts)} (
  id bigint PRIMARY KEY,
  first_attempt_at timestamptz NOT NULL
)`,
    `CREATE TABLE IF NOT EXISTS ${sqlName(tables.deadLetters)} (
  id bigint PRIMARY KEY,
  counter text,
  amount bigint,
  created_at timestamptz,
  reason text NOT NULL,
  dead_at timestamptz NOT NULL DEFAULT now()
)`,
    `CREATE TABLE IF NOT EXISTS ${sqlName(tables.repairs)} (
  key_namespace text NOT NULL,
  counter text NOT NULL,
  repair_number bigint NOT NULL,
  amount bigint NOT NULL,
  applied boolean NOT NULL,
  repaired_at timestamptz NOT NULL,
  PRIMARY KEY (key_namespace, counter, repair_number)
)`,
    `CREATE TABLE IF NOT EXISTS ${sqlName(tables.identity)} (
  key_namespace text PRIMARY KEY,
  system_identifier text NOT NULL,
  outbox_oid bigint NOT NULL,
  sequence_filenode bigint,
  id_high_water bigint NOT NULL,
  recorded_at timestamptz NOT NULL
)`,
  ];
  if (tables.archive !== undefined) {
    statements.push(
      `CREATE TABLE IF NOT EXISTS ${sqlName(tables.archive)} (
  id bigint PRIMARY KEY,
  counter text NOT NULL,
  amount bigint NOT NULL,
  created_at timestamptz NOT NULL,
  relayed_at timestamptz NOT NULL DEFAULT now()
)`,
      `CREATE INDEX IF NOT EXISTS "${tables.archive.name}_counter_idx" ON ${sqlName(tables.archive)} (counter)`,
    );
  }
  return statements;
}

/** Where the outbox is: its oid (the lock key) and the namespace its keys default to. */
export interface ResolvedOutbox {
  oid: number;
  /** database.schema.table: the default key namespace. */
  qualifiedName: string;
}

const columnTypes: Record<string, Record<string, readonly string[]>> = {
  outbox: { id: ['bigint'], counter: ['text', 'character varying'], amount: ['bigint'], created_at: ['timestamp with time zone'] },
  archive: { id: ['bigint'], counter: ['text', 'character varying'], amount: ['bigint'], created_at: ['timestamp with time zone'] },
  deadLetters: { id: ['bigint'], counter: ['text', 'character varying'], amount: ['bigint'], reason: ['text'] },
  attempts: { id: ['bigint'], first_attempt_at: ['timestamp with time zone'] },
  repairs: { key_namespace: ['text'], counter: ['text'], repair_number: ['bigint'], amount: ['bigint'] },
  identity: {
    key_namespace: ['text'],
    system_identifier: ['text'],
    outbox_oid: ['bigint'],
    sequence_filenode: ['bigint'],
    id_high_water: ['bigint'],
  },
};

/** The table's oid, or undefined when it does not exist. */
async function oidOf(client: pg.Client, table: TableName): Promise<number | undefined> {
  const result = await client.query<{ oid: string | null }>('SELECT to_regclass($1)::oid::int8 AS oid', [sqlName(table)]);
  const oid = result.rows[0]?.oid;
  return oid === null || oid === undefined ? undefined : Number(oid);
}

/** Refuses (one line, naming the table and column) a table without the columns the relay reads. */
async function checkColumns(client: pg.Client, table: TableName, oid: number, kind: keyof typeof columnTypes): Promise<void> {
  const result = await client.query<{ name: string; type: string }>(
    `SELECT attname AS name, format_type(atttypid, NULL) AS type FROM pg_attribute
      WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped`,
    [oid],
  );
  const actual = new Map(result.rows.map((row) => [row.name, row.type]));
  for (const [column, types] of Object.entries(columnTypes[kind]!)) {
    const type = actual.get(column);
    if (type === undefined)
      throw new RelayError(RelayErrorCode.schema, `table ${formatTableName(table)} has no column "${column}" (expected ${types[0]})`);
    if (!types.includes(type))
      throw new RelayError(RelayErrorCode.schema, `column ${formatTableName(table)}.${column} is ${type}; expected ${types.join(' or ')}`);
  }
  // Every table but the repairs and the identity is keyed by the outbox row's id.
  if (kind === 'repairs' || kind === 'identity') return;
  const unique = await client.query<{ ok: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]
      WHERE i.indrelid = $1 AND i.indisunique AND i.indnkeyatts = 1 AND a.attname = 'id') AS ok`,
    [oid],
  );
  if (!unique.rows[0]!.ok)
    throw new RelayError(
      RelayErrorCode.schema,
      `column ${formatTableName(table)}.id is not unique: it needs a primary key or unique index`,
    );
}

/**
 * Checks the outbox (it must exist: the service owns it) and creates the
 * relay's own tables if absent, under the exclusive lock so two relays
 * starting at once do not race on CREATE.
 */
export async function prepareTables(client: pg.Client, tables: OutboxTables): Promise<ResolvedOutbox> {
  const oid = await oidOf(client, tables.outbox);
  if (oid === undefined)
    throw new RelayError(
      RelayErrorCode.schema,
      `table ${formatTableName(tables.outbox)} does not exist (tally relay --create-table creates it as docs/outbox.md shows)`,
    );
  await checkColumns(client, tables.outbox, oid, 'outbox');
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [outboxLockKey(oid).toString()]);
    for (const statement of relayTablesDdl(tables)) await client.query(statement);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
  for (const [table, kind] of [
    [tables.attempts, 'attempts'],
    [tables.deadLetters, 'deadLetters'],
    [tables.archive, 'archive'],
    [tables.repairs, 'repairs'],
    [tables.identity, 'identity'],
  ] as const) {
    if (table !== undefined) await checkColumns(client, table, (await oidOf(client, table))!, kind);
  }
  const names = await client.query<{ database: string; schema: string }>(
    `SELECT current_database() AS database, n.nspname AS schema FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = $1`,
    [oid],
  );
  const { database, schema } = names.rows[0]!;
  return { oid, qualifiedName: `${database}.${schema}.${tables.outbox.name}` };
}

/** `tally relay --create-table`: the outbox (documented shape) and the relay's tables; existing ones are left as they are. */
export async function createTables(client: pg.Client, tables: OutboxTables): Promise<void> {
  await client.query(outboxTableDdl(tables.outbox));
  await prepareTables(client, tables);
}
