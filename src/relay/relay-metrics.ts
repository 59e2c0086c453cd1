// The relay's Prometheus metrics (tally_relay_*): rows relayed, batches, dead
// letters, what waits in the outbox and for how long, errors by kind, the
// window-edge halt and recount drift. Recording only; decides nothing.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { batchSizeBuckets, createMetricsRegistry, latencyBucketsSeconds } from '../common/index.ts';

/** Kinds of tally_relay_errors_total. */
export type RelayErrorKind = 'postgres' | 'tally' | 'beyond_window' | 'reconcile' | 'id_reuse';

/** Drift series kept per counter: the most drifting first, the rest only in the count. */
const driftSeriesMax = 100;

/** Lag from a row's created_at to its commit, in seconds: 1 ms to 1 h. */
const lagBucketsSeconds = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

export class RelayMetrics {
  readonly registry: Registry;
  readonly rowsRelayed: Counter<'outcome'>;
  readonly batches: Counter;
  readonly batchRows: Histogram;
  readonly batchSeconds: Histogram;
  readonly lagSeconds: Histogram;
  readonly deadLetters: Counter<'reason'>;
  readonly capRefusals: Counter<'cap'>;
  readonly rowsPending: Gauge;
  readonly oldestPendingAgeSeconds: Gauge;
  readonly errors: Counter<'kind'>;
  readonly halted: Gauge;
  readonly rowsBeyondWindow: Gauge;
  readonly oldestRowBeyondWindow: Gauge;
  readonly reconciles: Counter;
  readonly countersDrifting: Gauge;
  readonly drift: Gauge<'counter'>;

  constructor(labels: { table: string; relay: string }) {
    this.registry = createMetricsRegistry({ process: 'relay', ...labels });
    const registers = [this.registry];
    this.rowsRelayed = new Counter({
      name: 'tally_relay_rows_relayed_total',
      help: 'Outbox rows acknowledged by Tally and taken out of the outbox; outcome=duplicate: an earlier send had applied it',
      labelNames: ['outcome'],
      registers,
    });
    this.batches = new Counter({ name: 'tally_relay_batches_total', help: 'Batches committed', registers });
    this.batchRows = new Histogram({
      name: 'tally_relay_batch_rows',
      help: 'Rows per committed batch',
      buckets: batchSizeBuckets,
      registers,
    });
    this.batchSeconds = new Histogram({
      name: 'tally_relay_batch_seconds',
      help: 'From claim to commit, per batch',
      buckets: latencyBucketsSeconds,
      registers,
    });
    this.lagSeconds = new Histogram({
      name: 'tally_relay_lag_seconds',
      help: "From a row's created_at to the commit that took it out of the outbox",
      buckets: lagBucketsSeconds,
      registers,
    });
    this.deadLetters = new Counter({
      name: 'tally_relay_dead_letters_total',
      help: 'Rows moved to the dead-letter table, by reason',
      labelNames: ['reason'],
      registers,
    });
    this.capRefusals = new Counter({
      name: 'tally_relay_cap_refusals_total',
      help: 'Rows Tally refused alone for a directory cap (--counters-max, --shards-total-max) and moved to the dead letters (reason cap_exceeded), by cap',
      labelNames: ['cap'],
      registers,
    });
    this.rowsPending = new Gauge({ name: 'tally_relay_rows_pending', help: 'Rows in the outbox at the last sample', registers });
    this.oldestPendingAgeSeconds = new Gauge({
      name: 'tally_relay_oldest_pending_age_seconds',
      help: "Age of the outbox's oldest row (lowest id) at the last sample; 0 when empty",
      registers,
    });
    this.errors = new Counter({
      name: 'tally_relay_errors_total',
      help: 'Failed batches and checks, by kind',
      labelNames: ['kind'],
      registers,
    });
    this.halted = new Gauge({
      name: 'tally_relay_halted',
      help: '1 while the relay sends nothing because rows of unknown fate are older than the dedup window (tally relay --resolve)',
      registers,
    });
    this.rowsBeyondWindow = new Gauge({
      name: 'tally_relay_rows_beyond_window',
      help: 'Rows whose first send may be older than the dedup window: never sent again without an operator',
      registers,
    });
    this.oldestRowBeyondWindow = new Gauge({
      name: 'tally_relay_row_beyond_window_id',
      help: 'Lowest id among the rows beyond the dedup window (0 when none): the first row tally relay --resolve must decide',
      registers,
    });
    this.reconciles = new Counter({ name: 'tally_relay_reconciles_total', help: 'Background recounts completed', registers });
    this.countersDrifting = new Gauge({
      name: 'tally_relay_counters_drifting',
      help: "Counters whose exact total differed from their archived rows' sum at the last recount",
      registers,
    });
    this.drift = new Gauge({
      name: 'tally_relay_drift',
      help: `Exact total minus the archived rows' sum, per drifting counter (at most ${driftSeriesMax} series)`,
      labelNames: ['counter'],
      registers,
    });
    this.halted.set(0);
    this.rowsBeyondWindow.set(0);
    this.oldestRowBeyondWindow.set(0);
    this.countersDrifting.set(0);
    for (const outcome of ['applied', 'duplicate']) this.rowsRelayed.inc({ outcome }, 0);
    for (const kind of ['postgres', 'tally', 'beyond_window', 'reconcile', 'id_reuse']) this.errors.inc({ kind }, 0);
  }

  /** Replaces the drift series with this round's: the largest drifts by size, bounded. */
  setDrift(drifts: ReadonlyMap<string, bigint>): void {
    this.drift.reset();
    const drifting = [...drifts].filter(([, drift]) => drift !== 0n);
    this.countersDrifting.set(drifting.length);
    const size = (value: bigint): bigint => (value < 0n ? -value : value);
    drifting.sort((a, b) => (size(b[1]) > size(a[1]) ? 1 : size(b[1]) < size(a[1]) ? -1 : 0));
    for (const [counter, drift] of drifting.slice(0, driftSeriesMax)) this.drift.set({ counter }, Number(drift));
  }

  /** The label of a dead letter's reason: its code, before the colon. */
  static reasonLabel(reason: string): string {
    return reason.split(':', 1)[0]!;
  }
}
