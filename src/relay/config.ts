// The relay's settings: flags of `tally relay` / `tally recount`, else the
// mirroring TALLY_* environment keys, else defaults; every one validated
// here, at startup, with a message naming it. Reads no database.
import os from 'node:os';
import {
  ConfigError,
  ConfigReader,
  HelpRequested,
  isLogLevel,
  type LogLevel,
  type MetricsPort,
  type SettingHelp,
} from '../common/index.ts';
import { batchItemsMax } from '../wire/index.ts';

/** A table as `name` or `schema.name`: lowercase identifiers, quoted when used. */
export interface TableName {
  schema: string | undefined;
  name: string;
}

export interface OutboxTables {
  outbox: TableName;
  /** Where relayed rows go; undefined: they are deleted (no recount possible). */
  archive: TableName | undefined;
  deadLetters: TableName;
  /** The relay's own record of each row's first send (the window edge). */
  attempts: TableName;
  /** recount --repair's record of each counter's repairs: the next repair's key. */
  repairs: TableName;
  /** Per key namespace: the database and table the keys were issued on, and the highest id sent (id reuse). */
  identity: TableName;
}

export interface PostgresSettings {
  /** postgres:// or postgresql:// URL. */
  url: string;
  tables: OutboxTables;
  /** Idempotency keys are `outbox:<keyNamespace>:<id>`; undefined: database.schema.table, read from the database. */
  keyNamespace: string | undefined;
  /** The cluster's dedup window (router and nodes, --dedup-window-ms): a row is re-sent only well inside it. */
  dedupWindowMs: number;
}

export interface RelayConfig extends PostgresSettings {
  relayId: string;
  /** Rows claimed, sent and committed together. */
  batchRows: number;
  /** How long to wait after finding the outbox empty. */
  pollIntervalMs: number;
  /** 0: no background recount; else every this often for each counter relayed. */
  reconcileEveryMs: number;
  metricsHost: string;
  metricsPort: MetricsPort;
  logLevel: LogLevel;
  /** Relay until the outbox is empty, then exit (cron, tests); a halt is an error exit. Defaults to no metrics and warn. */
  once: boolean;
}

export const relayDefaults = {
  batchRows: 500,
  pollIntervalMs: 100,
  dedupWindowMs: 24 * 60 * 60 * 1000,
  metricsHost: '127.0.0.1',
  metricsPort: 9470,
  tableName: 'tally_outbox',
} as const;

const identifier = /^[a-z_][a-z0-9_]{0,62}$/;

/** Parses `name` or `schema.name`; what names the setting in the message. */
export function parseTableName(text: string, what: string): TableName {
  const parts = text.split('.');
  if (parts.length > 2 || !parts.every((part) => identifier.test(part)))
    throw new ConfigError(
      `${what} must be a table name (lowercase letters, digits and _, up to 63, optionally schema.table), got "${text}"`,
    );
  return parts.length === 2 ? { schema: parts[0], name: parts[1]! } : { schema: undefined, name: parts[0]! };
}

/** The relay's own table beside the outbox: same schema, the outbox's name with a suffix. */
function besideOutbox(outbox: TableName, suffix: string, flag: string): TableName {
  const name = `${outbox.name}${suffix}`;
  if (!identifier.test(name)) throw new ConfigError(`the outbox table's name is too long for "${name}": give --${flag}`);
  return { schema: outbox.schema, name };
}

export function formatTableName(table: TableName): string {
  return table.schema === undefined ? table.name : `${table.schema}.${table.name}`;
}

/** Checks the URL's shape without connecting; the message never repeats a password. */
function parsePostgresUrl(text: string | undefined): string {
  if (text === undefined) throw new ConfigError('--postgres (or TALLY_POSTGRES) is required: a postgresql:// URL');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError('--postgres must be a URL such as postgresql://user@host:5432/db, got something that does not parse');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw new ConfigError(`--postgres must be a postgresql:// URL, got a ${url.protocol}// URL`);
  return text;
}

/** The settings `recount` and `--create-table`/`--resolve` share with the relay. */
export function parsePostgresSettings(reader: ConfigReader): PostgresSettings {
  const urlText = reader.nonEmptyString('postgres');
  // Required, so under --help (nothing given) it is only listed.
  const url = reader.helpMode ? '' : parsePostgresUrl(urlText);
  const outbox = parseTableName(reader.string('table', relayDefaults.tableName), '--table');
  const archiveText = reader.nonEmptyString('archive-table');
  const deadText = reader.nonEmptyString('dead-letter-table');
  const tables: OutboxTables = {
    outbox,
    archive: archiveText === undefined ? undefined : parseTableName(archiveText, '--archive-table'),
    deadLetters:
      deadText === undefined ? besideOutbox(outbox, '_dead_letters', 'dead-letter-table') : parseTableName(deadText, '--dead-letter-table'),
    attempts: besideOutbox(outbox, '_attempts', 'table'),
    repairs: besideOutbox(outbox, '_repairs', 'table'),
    identity: besideOutbox(outbox, '_identity', 'table'),
  };
  const names = [tables.outbox, tables.archive, tables.deadLetters, tables.attempts, tables.repairs, tables.identity]
    .filter((table) => table !== undefined)
    .map(formatTableName);
  if (new Set(names).size !== names.length)
    throw new ConfigError(`the outbox, archive and dead-letter tables must differ, got ${names.join(', ')}`);
  const keyNamespace = reader.nonEmptyString('key-namespace');
  if (keyNamespace !== undefined && Buffer.byteLength(keyNamespace) > 64) throw new ConfigError('--key-namespace must be at most 64 bytes');
  return {
    url,
    tables,
    keyNamespace,
    dedupWindowMs: reader.int('dedup-window-ms', relayDefaults.dedupWindowMs, { min: 1_000, max: 30 * 24 * 60 * 60 * 1000 }),
  };
}

const msPerUnit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** 0 (off), plain milliseconds, or a whole number with a unit: 500ms, 30s, 15m, 1h, 1d. */
function parseDurationMs(text: string | undefined, what: string): number {
  if (text === undefined || text === '0') return 0;
  const match = /^(\d{1,9})(ms|s|m|h|d)?$/.exec(text);
  if (match === null) throw new ConfigError(`${what} must be a duration such as 30s, 5m or 1h (0: off), got "${text}"`);
  const durationMs = Number(match[1]) * msPerUnit[(match[2] ?? 'ms') as keyof typeof msPerUnit];
  if (durationMs < 1_000 || durationMs > 7 * msPerUnit.d) throw new ConfigError(`${what} must be between 1s and 7d, got "${text}"`);
  return durationMs;
}

export function parseRelayConfig(flags: Map<string, string>, env: NodeJS.ProcessEnv): RelayConfig {
  const reader = new ConfigReader(flags, env);
  const settings = parsePostgresSettings(reader);
  // --once is a command, not a service: quiet unless something goes wrong, and no metrics endpoint unless asked.
  const once = flags.has('once');
  const logLevel = reader.string('log-level', once ? 'warn' : 'info');
  if (!isLogLevel(logLevel)) throw new ConfigError(`--log-level must be debug, info, warn or error, got "${logLevel}"`);
  const reconcileEveryMs = parseDurationMs(reader.nonEmptyString('reconcile-every'), '--reconcile-every');
  if (reconcileEveryMs > 0 && settings.tables.archive === undefined)
    throw new ConfigError('--reconcile-every needs --archive-table: a recount sums the archived rows');
  const config: RelayConfig = {
    ...settings,
    // Under --help the default is named, not computed: it differs per process.
    relayId: reader.string('relay-id', reader.helpMode ? 'HOSTNAME-PID' : `${os.hostname()}-${process.pid}`),
    batchRows: reader.int('batch', relayDefaults.batchRows, { min: 1, max: batchItemsMax }),
    pollIntervalMs: reader.int('poll-interval-ms', relayDefaults.pollIntervalMs, { min: 1, max: 60_000 }),
    reconcileEveryMs,
    metricsHost: reader.string('metrics-host', relayDefaults.metricsHost),
    metricsPort: reader.metricsPort('metrics-port', once ? 0 : relayDefaults.metricsPort),
    logLevel,
    once,
  };
  // Under --help: the settings read, as HelpRequested (nothing else is read).
  if (reader.helpMode) reader.rejectUnknownFlags();
  return config;
}

/** The flags and environment keys parseRelayConfig reads (`tally relay --help`), from its own reading. */
export function relaySettingsHelp(): readonly SettingHelp[] {
  return settingsHelpOf(() => parseRelayConfig(new Map([['help', 'true']]), {}));
}

/** The flags and environment keys parsePostgresSettings reads (`tally recount --help`). */
export function postgresSettingsHelp(): readonly SettingHelp[] {
  return settingsHelpOf(() => {
    const reader = new ConfigReader(new Map([['help', 'true']]), {});
    parsePostgresSettings(reader);
    reader.rejectUnknownFlags();
  });
}

function settingsHelpOf(read: () => unknown): readonly SettingHelp[] {
  try {
    read();
  } catch (error) {
    if (error instanceof HelpRequested) return error.settings;
    throw error;
  }
  throw new Error('a settings reader under --help must end in HelpRequested');
}
