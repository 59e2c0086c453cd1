// The relay loop: claim a batch, stamp its first sends, send it to Tally as
// keyed increments, take it out of the outbox in the claiming transaction.
// A crash anywhere leaves rows in the outbox to be sent again under the same
// keys; it never re-sends a row whose first send may be past the dedup window.
import { ErrorCode, TallyError, monotonicNowMs } from '../wire/index.ts';
import { type Logger } from '../common/index.ts';
import { formatTableName, type RelayConfig } from './config.ts';
import { Outbox, type DeadRow } from './outbox/index.ts';
import { idReuseMessage, identityChange } from './outbox/index.ts';
import { RelayError, RelayErrorCode, oneLine } from './relay-error.ts';
import { RelayMetrics } from './relay-metrics.ts';
import { reconcile, type RecountClient } from './recount.ts';
import { isBeyondWindow, resendLimitMs, splitSendable, type OutboxRow } from './outbox/index.ts';
import { sendRows } from './send-rows.ts';
import { testHook } from './test-hook.ts';

/** Counters remembered for --reconcile-every: the most recently relayed. */
const reconcileCountersMax = 10_000;
/** How often the pending-rows gauges are sampled. */
const pendingSampleIntervalMs = 1_000;
/** How often a halted relay looks again whether an operator resolved the rows. */
const haltRecheckIntervalMs = 1_000;
const backoffMinMs = 100;
const backoffMaxMs = 5_000;
/** Consecutive failures after which --once gives up (the backoff makes that about 30 s). */
const onceErrorsMax = 12;
/** Rows a halt message names (the metric has the count). */
const namedRowsMax = 10;
/** How often a running relay asks the cluster its dedup window again (a router restarted with a shorter one). */
const windowCheckIntervalMs = 60_000;
/** After a failed ClusterStatus, the next try. */
const windowRetryIntervalMs = 5_000;

/** Errors that stop the relay (one line, exit 1): sending on could count twice or drop rows. */
const fatalCodes = new Set<RelayErrorCode>([RelayErrorCode.beyondWindow, RelayErrorCode.window, RelayErrorCode.identity]);

/** What the relay asks of Tally: the recount's calls and ClusterStatus, for the dedup window. */
export interface RelayClient extends RecountClient {
  clusterStatus(): Promise<{ dedupWindowMs: number; router: string }>;
}

/**
 * The relay's window against the cluster's (G12): a longer one would re-send
 * a row of unknown fate after Tally forgot its key, counting it twice. A
 * shorter or equal one only halts earlier. Undefined when it may run.
 */
export function windowRefusal(relayWindowMs: number, clusterWindowMs: number, router: string): string | undefined {
  if (clusterWindowMs <= 0)
    return `router ${router} does not advertise its dedup window (a router older than this relay): the relay cannot check its --dedup-window-ms ${relayWindowMs} against the cluster's, and sends nothing`;
  if (relayWindowMs <= clusterWindowMs) return undefined;
  return (
    `the relay's --dedup-window-ms ${relayWindowMs} is longer than the cluster's dedup window of ${clusterWindowMs} ms (router ${router}): ` +
    `a row re-sent after Tally forgot its key would count twice, so the relay sends nothing; give it --dedup-window-ms ${clusterWindowMs} or less`
  );
}

function isCredentialRefusal(error: unknown): boolean {
  return error instanceof TallyError && (error.code === ErrorCode.unauthenticated || error.code === ErrorCode.permissionDenied);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}

/** The halt's one line: which rows, how old, what to do. */
export function beyondWindowMessage(table: string, rows: readonly OutboxRow[], dedupWindowMs: number): string {
  const named = rows
    .slice(0, namedRowsMax)
    .map((row) => String(row.id))
    .join(', ');
  const more = rows.length > namedRowsMax ? ` and ${rows.length - namedRowsMax} more` : '';
  const oldestSeconds = Math.round(Math.max(...rows.map((row) => row.attemptAgeMs ?? 0)) / 1000);
  return (
    `${rows.length === 1 ? 'row' : 'rows'} ${named}${more} of ${table} ${rows.length === 1 ? 'was' : 'were'} first sent up to ${oldestSeconds} s ago, ` +
    `past ${resendLimitMs(dedupWindowMs) / 1000} s (0.9 x the dedup window): sending again could count twice, so the relay sends nothing ` +
    `until an operator decides (tally recount tells whether they counted; tally relay --resolve list shows the choices)`
  );
}

export class Relay {
  readonly metrics: RelayMetrics;
  private claimer: Outbox | undefined;
  private stamper: Outbox | undefined;
  private readonly stopping = new AbortController();
  private readonly relayedCounters = new Map<string, true>();
  private errorStreak = 0;
  private haltedOn = '';
  private lastPendingSampleMs = Number.NEGATIVE_INFINITY;
  private lastReconcileMs: number;
  private readonly table: string;

  /** When the cluster's dedup window is next asked (monotonic ms); before the first batch at the latest. */
  private nextWindowCheckMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly config: RelayConfig,
    private readonly client: RelayClient,
    private readonly logger: Logger,
  ) {
    this.table = formatTableName(config.tables.outbox);
    this.metrics = new RelayMetrics({ table: this.table, relay: config.relayId });
    this.lastReconcileMs = monotonicNowMs();
  }

  /** Connects and checks the tables; fails (one line) on a bad URL, a missing table or wrong columns. */
  async open(): Promise<void> {
    const name = `tally-relay ${this.config.relayId}`;
    try {
      this.claimer = await Outbox.open(this.config, name);
      this.stamper = await Outbox.open(this.config, `${name} stamps`);
    } catch (error) {
      // An open connection would keep the process alive after the command failed.
      await this.closeConnections();
      throw error;
    }
  }

  /** Closes the connections open() made (a relay that will not run). */
  async close(): Promise<void> {
    await this.closeConnections();
  }

  /** Asks the loop to stop after the batch under way (SIGTERM, SIGINT). */
  stop(): void {
    this.stopping.abort();
  }

  /** Relays until stop(), or with config.once until the outbox is empty. A halt in once mode rejects with the halt's line. */
  async run(): Promise<void> {
    try {
      while (!this.stopping.signal.aborted) {
        const more = await this.step();
        if (more === 'empty' && this.config.once) return;
        if (more !== 'full') await sleep(more === 'halted' ? haltRecheckIntervalMs : this.config.pollIntervalMs, this.stopping.signal);
      }
    } finally {
      await this.closeConnections();
    }
  }

  /** One batch, with errors counted and backed off from; says whether more rows are likely waiting. */
  private async step(): Promise<'full' | 'partial' | 'empty' | 'halted'> {
    try {
      await this.connect();
      await this.checkClusterWindow();
      await this.checkIdentity();
      await this.samplePending();
      await this.reconcileWhenDue();
      const outcome = await this.relayBatch();
      this.errorStreak = 0;
      return outcome;
    } catch (error) {
      if (error instanceof RelayError && fatalCodes.has(error.code)) throw error;
      await this.claimer?.rollback();
      // --once runs from cron or a script: a refused credential at once, other failures after about half a minute.
      if (this.config.once && isCredentialRefusal(error)) {
        await this.closeConnections();
        throw error;
      }
      if (this.config.once && this.errorStreak + 1 >= onceErrorsMax) {
        await this.closeConnections();
        throw new Error(`gave up after ${onceErrorsMax} failed attempts: ${oneLine(error)}`, { cause: error });
      }
      const kind = error instanceof TallyError ? 'tally' : 'postgres';
      this.metrics.errors.inc({ kind });
      this.errorStreak++;
      if (this.errorStreak === 1 || this.errorStreak % 20 === 0)
        this.logger.warn('relay batch failed; retrying', { kind, error: oneLine(error), streak: this.errorStreak });
      // A PostgreSQL failure may have broken a connection: start both afresh.
      if (kind === 'postgres') await this.closeConnections();
      const backoffMs = Math.min(backoffMaxMs, backoffMinMs * 2 ** Math.min(this.errorStreak - 1, 10));
      await sleep(backoffMs * (0.5 + Math.random() / 2), this.stopping.signal);
      return 'partial';
    }
  }

  /**
   * Asks the cluster its dedup window when due: at start (relayCommand: a
   * failure then stops the command) and every minute after (a failure then
   * waits for the next try; relaying goes on). A longer window of the
   * relay's, or a credential that may not ask, stops the relay.
   */
  async checkClusterWindow(): Promise<void> {
    if (monotonicNowMs() < this.nextWindowCheckMs) return;
    const first = this.nextWindowCheckMs === Number.NEGATIVE_INFINITY;
    let status: { dedupWindowMs: number; router: string };
    try {
      status = await this.client.clusterStatus();
    } catch (error) {
      if (isCredentialRefusal(error))
        throw new RelayError(
          RelayErrorCode.window,
          `cannot learn the cluster's dedup window: ClusterStatus was refused (${oneLine(error)}); the relay needs a token that may call it`,
        );
      if (first) throw error;
      this.nextWindowCheckMs = monotonicNowMs() + windowRetryIntervalMs;
      this.metrics.errors.inc({ kind: 'tally' });
      this.logger.warn('cannot ask the cluster its dedup window; relaying on the last answer', { error: oneLine(error) });
      return;
    }
    const refusal = windowRefusal(this.config.dedupWindowMs, status.dedupWindowMs, status.router);
    // Fatal: the command prints the line and exits 1.
    if (refusal !== undefined) throw new RelayError(RelayErrorCode.window, refusal);
    this.nextWindowCheckMs = monotonicNowMs() + windowCheckIntervalMs;
  }

  /**
   * Before each batch: the database and table the namespace's keys were
   * issued on, and the id sequence against the highest id sent. A change
   * stops the relay, naming the rows whose ids may repeat.
   */
  private async checkIdentity(): Promise<void> {
    const finding = await this.stamper!.identityFinding();
    const why = identityChange(this.table, finding);
    if (why === undefined) return;
    const ids = await this.stamper!.idsUpTo(finding.idHighWater, namedRowsMax);
    this.metrics.errors.inc({ kind: 'id_reuse' });
    throw new RelayError(RelayErrorCode.identity, idReuseMessage(this.table, why, ids.slice(0, namedRowsMax), ids.length > namedRowsMax));
  }

  private async connect(): Promise<void> {
    if (this.claimer !== undefined && this.stamper !== undefined) return;
    await this.closeConnections();
    await this.open();
    this.logger.info('relay connected to PostgreSQL', { table: this.table });
  }

  private async closeConnections(): Promise<void> {
    const [claimer, stamper] = [this.claimer, this.stamper];
    this.claimer = undefined;
    this.stamper = undefined;
    await Promise.all([claimer?.close(), stamper?.close()]);
  }

  private async relayBatch(): Promise<'full' | 'partial' | 'empty' | 'halted'> {
    const claimer = this.claimer!;
    const startedMs = monotonicNowMs();
    const rows = await claimer.claim(this.config.batchRows);
    if (rows.length === 0) {
      await claimer.rollback();
      this.clearHalt();
      return 'empty';
    }
    const beyond = rows.filter((row) => isBeyondWindow(row, this.config.dedupWindowMs));
    if (beyond.length > 0) {
      await claimer.rollback();
      return this.halt(beyond);
    }
    this.clearHalt();
    const { sendable, dead } = splitSendable(rows);
    // Durable before the send: were this relay to die after it, the row's first send is on record for the window check.
    await this.stamper!.recordFirstSends(sendable.filter((row) => row.attemptAgeMs === null).map((row) => row.id));
    await testHook('before-send', sendable.length);
    const outcome = await sendRows(this.client, claimer.keyNamespace, sendable);
    await testHook('after-ack', sendable.length);
    dead.push(...outcome.dead);
    await claimer.takeOut([...outcome.applied, ...outcome.duplicates], dead);
    await claimer.commit();
    this.record(rows, outcome.applied.length, outcome.duplicates.length, dead, startedMs);
    return rows.length === this.config.batchRows ? 'full' : 'partial';
  }

  private record(
    rows: readonly OutboxRow[],
    appliedCount: number,
    duplicateCount: number,
    dead: readonly DeadRow[],
    startedMs: number,
  ): void {
    const elapsedMs = monotonicNowMs() - startedMs;
    this.metrics.batches.inc();
    this.metrics.batchRows.observe(rows.length);
    this.metrics.batchSeconds.observe(elapsedMs / 1000);
    this.metrics.rowsRelayed.inc({ outcome: 'applied' }, appliedCount);
    this.metrics.rowsRelayed.inc({ outcome: 'duplicate' }, duplicateCount);
    for (const row of dead) {
      this.metrics.deadLetters.inc({ reason: RelayMetrics.reasonLabel(row.reason) });
      if (row.cap !== undefined) this.metrics.capRefusals.inc({ cap: row.cap });
    }
    if (dead.length > 0)
      this.logger.warn('rows moved to the dead letters', { rows: dead.map((row) => `${row.id}: ${row.reason}`).slice(0, 10) });
    const deadIds = new Set(dead.map((row) => row.id));
    for (const row of rows) {
      this.metrics.lagSeconds.observe((row.ageMs + elapsedMs) / 1000);
      if (this.config.reconcileEveryMs > 0 && !deadIds.has(row.id) && row.counter !== null) this.remember(row.counter);
    }
  }

  private remember(counter: string): void {
    this.relayedCounters.delete(counter);
    this.relayedCounters.set(counter, true);
    if (this.relayedCounters.size > reconcileCountersMax) this.relayedCounters.delete(this.relayedCounters.keys().next().value!);
  }

  private halt(beyond: readonly OutboxRow[]): 'halted' {
    const message = beyondWindowMessage(this.table, beyond, this.config.dedupWindowMs);
    this.metrics.halted.set(1);
    this.metrics.rowsBeyondWindow.set(beyond.length);
    this.metrics.oldestRowBeyondWindow.set(Number(beyond[0]!.id));
    if (this.config.once) throw new RelayError(RelayErrorCode.beyondWindow, message);
    const ids = beyond.map((row) => String(row.id)).join(',');
    if (ids !== this.haltedOn) {
      this.metrics.errors.inc({ kind: 'beyond_window' });
      this.logger.error(message, { rows: beyond.slice(0, 100).map((row) => String(row.id)) });
      this.haltedOn = ids;
    }
    return 'halted';
  }

  private clearHalt(): void {
    if (this.haltedOn === '') return;
    this.haltedOn = '';
    this.metrics.halted.set(0);
    this.metrics.rowsBeyondWindow.set(0);
    this.metrics.oldestRowBeyondWindow.set(0);
    this.logger.info('rows beyond the dedup window resolved; relaying again', { table: this.table });
  }

  private async samplePending(): Promise<void> {
    if (monotonicNowMs() - this.lastPendingSampleMs < pendingSampleIntervalMs) return;
    this.lastPendingSampleMs = monotonicNowMs();
    const pending = await this.stamper!.pending();
    this.metrics.rowsPending.set(pending.rows);
    this.metrics.oldestPendingAgeSeconds.set(pending.oldestAgeSeconds);
  }

  /** --reconcile-every: between batches, on the stamping connection (no claim of this relay is open then). */
  private async reconcileWhenDue(): Promise<void> {
    if (this.config.reconcileEveryMs === 0 || monotonicNowMs() - this.lastReconcileMs < this.config.reconcileEveryMs) return;
    this.lastReconcileMs = monotonicNowMs();
    try {
      const drifts = await reconcile(this.stamper!, this.client, [...this.relayedCounters.keys()]);
      this.metrics.setDrift(drifts);
      this.metrics.reconciles.inc();
      const drifting = [...drifts].filter(([, drift]) => drift !== 0n);
      if (drifting.length > 0)
        this.logger.warn('recount found drift', { counters: drifting.slice(0, 10).map(([counter, drift]) => `${counter}: ${drift}`) });
    } catch (error) {
      this.metrics.errors.inc({ kind: 'reconcile' });
      this.logger.warn('recount failed', { error: oneLine(error) });
    }
  }
}
