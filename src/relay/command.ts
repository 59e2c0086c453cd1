// `tally relay` and `tally recount`: their options (flags, else TALLY_*
// environment), the long-running relay with its metrics endpoint and
// signals, and the one-shot tools. Output only; the rules live beside it.
import { ConfigError, ConfigReader, createLogger, startMetricsServer } from '../common/index.ts';
import { formatTableName, parsePostgresSettings, parseRelayConfig, type PostgresSettings } from './config.ts';
import { Outbox, connectPostgres } from './outbox/index.ts';
import { createTables } from './outbox/index.ts';
import { recount, type RecountClient, type RecountReport } from './recount.ts';
import { RelayError, RelayErrorCode } from './relay-error.ts';
import { Relay, type RelayClient } from './relay.ts';
import { resendLimitMs } from './outbox/index.ts';

/** Makes the CLI's usage error (exit 2) from a message. */
export type UsageErrorOf = (message: string) => Error;

const resolveChoices = `choices for rows whose first send is older than 0.9 x the dedup window (their fate is unknown):
  tally relay --resolve counted --rows IDS      they did count (tally recount shows drift equal to their sum): take them out of
                                                the outbox into the archive (or delete them), sending nothing
  tally relay --resolve resend --rows IDS       they did not count (tally recount shows no drift): forget their first send, so
                                                the relay sends them as new
  tally relay --resolve dead-letter --rows IDS  decide later: move them to the dead-letter table, reason beyond_window
IDS is a comma-separated list of row ids, or all. Run it while relays run: they hold off until it commits.`;

function settingsOrUsage<T>(parse: () => T, usageError: UsageErrorOf): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof ConfigError) throw usageError(error.message);
    throw error;
  }
}

function jsonLine(value: unknown): string {
  return JSON.stringify(value, (_key, field) => (typeof field === 'bigint' ? field.toString() : field));
}

/** tally relay [--create-table | --resolve ...]: relays until SIGTERM/SIGINT (or, with --once, until the outbox is empty). */
export async function relayCommand(
  client: RelayClient,
  args: string[],
  flags: Map<string, string>,
  usageError: UsageErrorOf,
): Promise<void> {
  if (args.length !== 0) throw usageError('expected: tally relay --postgres URL [--table T] [flags] (no arguments)');
  const config = settingsOrUsage(() => parseRelayConfig(flags, process.env), usageError);
  if (flags.has('create-table')) return createTableCommand(config);
  const resolve = flags.get('resolve');
  if (resolve !== undefined) return resolveCommand(config, resolve, flags.get('rows'), usageError);
  const logger = createLogger('relay', config.logLevel);
  const relay = new Relay(config, client, logger);
  await relay.open();
  // Refuses to start with a window longer than the cluster's (one line, exit 1).
  try {
    await relay.checkClusterWindow();
  } catch (error) {
    await relay.close();
    throw error;
  }
  const metrics =
    config.metricsPort === 0
      ? undefined
      : await startMetricsServer(relay.metrics.registry, config.metricsHost, config.metricsPort === 'any' ? 0 : config.metricsPort);
  const stop = (): void => relay.stop();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  logger.info('relay ready', {
    table: formatTableName(config.tables.outbox),
    relayId: config.relayId,
    batchRows: config.batchRows,
    metricsPort: metrics?.port ?? 0,
    archive: config.tables.archive === undefined ? null : formatTableName(config.tables.archive),
  });
  try {
    await relay.run();
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    await metrics?.close();
  }
  logger.info('relay stopped', {});
}

async function createTableCommand(settings: PostgresSettings): Promise<void> {
  const client = await connectPostgres(settings.url, 'tally-relay create-table');
  try {
    await createTables(client, settings.tables);
  } finally {
    await client.end().catch(() => {});
  }
  const { outbox, archive, deadLetters, attempts, repairs, identity } = settings.tables;
  const names = [outbox, archive, deadLetters, attempts, repairs, identity].filter((table) => table !== undefined).map(formatTableName);
  process.stdout.write(`tables ready: ${names.join(', ')}\n`);
}

/** The row ids of --rows: "all" or a comma-separated list. */
function parseRowIds(text: string | undefined, usageError: UsageErrorOf): bigint[] | 'all' {
  if (text === undefined) throw usageError('--resolve counted|resend|dead-letter needs --rows IDS (comma-separated ids, or all)');
  if (text === 'all') return 'all';
  if (!/^\d{1,19}(,\d{1,19})*$/.test(text)) throw usageError(`--rows must be comma-separated row ids or all, got "${text}"`);
  return text.split(',').map(BigInt);
}

async function resolveCommand(
  settings: PostgresSettings,
  choice: string,
  rowsText: string | undefined,
  usageError: UsageErrorOf,
): Promise<void> {
  if (choice !== 'list' && choice !== 'counted' && choice !== 'resend' && choice !== 'dead-letter')
    throw usageError(`--resolve must be list, counted, resend or dead-letter, got "${choice}"`);
  const wanted = choice === 'list' ? 'all' : parseRowIds(rowsText, usageError);
  const outbox = await Outbox.open(settings, 'tally-relay resolve');
  try {
    const limitMs = resendLimitMs(settings.dedupWindowMs);
    if (choice === 'list') {
      const rows = await outbox.rowsSentBefore(limitMs, 1_000);
      const lines = rows.map(
        (row) =>
          `  row ${row.id}: ${row.counter} ${row.amount !== null && row.amount >= 0n ? '+' : ''}${row.amount}, first sent ${Math.round((row.attemptAgeMs ?? 0) / 1000)} s ago`,
      );
      process.stdout.write(
        `${rows.length === 0 ? `no rows of ${formatTableName(settings.tables.outbox)} are beyond the dedup window` : `rows beyond the dedup window:\n${lines.join('\n')}`}\n\n${resolveChoices}\n`,
      );
      return;
    }
    await outbox.beginExclusive();
    try {
      const beyond = await outbox.rowsSentBefore(limitMs, 100_000);
      const beyondIds = new Set(beyond.map((row) => row.id));
      const ids = wanted === 'all' ? [...beyondIds] : wanted;
      const outside = ids.filter((id) => !beyondIds.has(id));
      if (outside.length > 0)
        throw new RelayError(
          RelayErrorCode.invalid,
          `row ${outside.join(', ')} is not in the outbox with a first send beyond the dedup window: nothing resolved`,
        );
      const resolvedCount = ids.length === 0 ? 0 : await outbox.resolveRows(ids, choice);
      if (ids.length === 0) await outbox.rollback();
      const what = {
        counted: 'taken out of the outbox without sending',
        resend: 'to be sent again as new',
        'dead-letter': 'moved to the dead letters',
      }[choice];
      process.stdout.write(`resolved ${resolvedCount} row${resolvedCount === 1 ? '' : 's'} (${ids.join(', ') || 'none'}): ${what}\n`);
    } catch (error) {
      await outbox.rollback();
      throw error;
    }
  } finally {
    await outbox.close();
  }
}

function recountLine(report: RecountReport): string {
  const sign = (value: bigint): string => (value > 0n ? `+${value}` : String(value));
  const head = `${report.counter}: archived ${report.archivedRows} rows summing ${report.archivedSum}, exact total ${report.total}, drift ${sign(report.drift)}`;
  if (report.beyondWindow.length > 0) {
    const unknown = report.beyondWindow.reduce((sum, row) => sum + row.amount, 0n);
    return `${head}; rows ${report.beyondWindow.map((row) => row.id).join(', ')} (summing ${unknown}) are beyond the dedup window: a drift of ${sign(unknown)} says they counted (tally relay --resolve counted), 0 that they did not (--resolve resend); nothing repaired`;
  }
  const resent = report.resentRows > 0 ? ` (after sending ${report.resentRows} unfinished rows again)` : '';
  if (report.drift === 0n) return `${head}${resent}: in agreement`;
  if (!report.repaired) return `${head}${resent}; tally recount --repair applies ${sign(-report.drift)}`;
  if (report.repairApplied) return `${head}${resent}; repaired: applied ${sign(-report.drift)}`;
  const after = report.driftAfterRepair ?? 0n;
  return `${head}${resent}; repaired: an earlier repair under the same key had landed; drift now ${after === 0n ? '0: in agreement' : `${sign(after)}: run tally recount --repair again`}`;
}

/** tally recount <counter> --postgres URL --archive-table T [--repair]: exit 3 while drift remains. */
export async function recountCommand(
  client: RecountClient,
  args: string[],
  flags: Map<string, string>,
  usageError: UsageErrorOf,
): Promise<void> {
  if (args.length !== 1) throw usageError('expected: tally recount <counter> --postgres URL --archive-table T [--table T] [--repair]');
  const settings = settingsOrUsage(() => parsePostgresSettings(new ConfigReader(flags, process.env)), usageError);
  if (settings.tables.archive === undefined) throw usageError('recount needs --archive-table: it sums the archived rows');
  const outbox = await Outbox.open(settings, 'tally-recount');
  try {
    const report = await recount(outbox, client, args[0]!, { repair: flags.has('repair'), dedupWindowMs: settings.dedupWindowMs });
    process.stdout.write(`${flags.has('json') ? jsonLine(report) : recountLine(report)}\n`);
    const driftRemains =
      report.beyondWindow.length > 0 || (report.drift !== 0n && !report.repaired) || (report.driftAfterRepair ?? 0n) !== 0n;
    if (driftRemains) process.exitCode = 3;
  } finally {
    await outbox.close();
  }
}
