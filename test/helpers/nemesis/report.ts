// What a run of schedules amounts to: faults by kind, operations by outcome,
// violations with their seeds, availability during each kind of fault (the
// share of unkeyed and of keyed increments acknowledged) and the time to full
// service after each heal. Arithmetic over results only; it judges nothing.
import type { FaultKind } from './faults.ts';
import { describeViolation, machineMonotonicMs, type LogComparison, type Operation, type Violation } from './check/index.ts';
import type { FaultRecord, ScheduleResult } from './schedule.ts';

/** Calls by outcome: ok (acknowledged), unknown (may have applied), failed (certainly not applied). */
interface Share {
  ok: number;
  unknown: number;
  failed: number;
  total: number;
}

export interface FaultKindStats {
  kind: FaultKind;
  count: number;
  /** Calls started while a fault of this kind was in place. */
  unkeyed: Share;
  keyed: Share;
  reads: Share;
  /**
   * Per heal, the soak's one measure of recovery: from the heal to the end
   * of the last call (of the load) that did not succeed before the next
   * fault, or before the quiet period after the last one ended.
   */
  recoveryMs: number[];
  /** Heals after which calls were still failing when the next fault came. */
  notRecovered: number;
  /** Faults that could not be applied or healed (a process that would not restart). */
  errors: string[];
}

export interface ScheduleSummary {
  name: string;
  seed: number;
  faults: string[];
  operations: number;
  violations: number;
  recoveredAfterMs: number | undefined;
  durationMs: number;
}

export interface SoakReport {
  startedAt: string;
  durationMs: number;
  schedules: ScheduleSummary[];
  faultsByKind: FaultKindStats[];
  operationsByOutcome: Record<string, number>;
  violations: { schedule: string; seed: number; text: string }[];
  logNotes: string[];
  /** Runs that stopped with an error (a cluster that would not start, say). */
  runErrors: string[];
}

const share = (operations: Operation[], test: (operation: Operation) => boolean): Share => {
  const matching = operations.filter(test);
  const count = (outcome: Operation['outcome']): number => matching.filter((operation) => operation.outcome === outcome).length;
  return { ok: count('ok'), unknown: count('unknown'), failed: count('failed'), total: matching.length };
};

const unkeyed = (operation: Operation): boolean => operation.kind === 'increment' && operation.key === undefined;
const keyed = (operation: Operation): boolean => operation.kind === 'increment' && operation.key !== undefined;
const isRead = (operation: Operation): boolean => operation.kind === 'read';

function addShare(into: Share, from: Share): void {
  into.ok += from.ok;
  into.unknown += from.unknown;
  into.failed += from.failed;
  into.total += from.total;
}

const emptyShare = (): Share => ({ ok: 0, unknown: 0, failed: 0, total: 0 });

/** After a heal: how long until calls stopped failing, within the fault's window. */
function recoveryOf(record: FaultRecord, operations: Operation[]): { recoveryMs: number; recovered: boolean } {
  const after = operations.filter((operation) => operation.startMs >= record.healedMs && operation.startMs < record.windowEndMs);
  const failing = after.filter((operation) => operation.outcome !== 'ok');
  if (failing.length === 0) return { recoveryMs: 0, recovered: true };
  const last = failing.reduce((latest, operation) => (operation.endMs > latest.endMs ? operation : latest));
  const succeededLater = after.some((operation) => operation.outcome === 'ok' && operation.startMs > last.startMs);
  return { recoveryMs: Math.max(0, last.endMs - record.healedMs), recovered: succeededLater };
}

export class SoakTally {
  private readonly startedMs = machineMonotonicMs();
  private readonly byKind = new Map<FaultKind, FaultKindStats>();
  readonly report: SoakReport = {
    startedAt: new Date().toISOString(),
    durationMs: 0,
    schedules: [],
    faultsByKind: [],
    operationsByOutcome: {},
    violations: [],
    logNotes: [],
    runErrors: [],
  };

  add(result: ScheduleResult, logs?: LogComparison): void {
    const { schedule, operations } = result;
    const violations: Violation[] = [...result.violations, ...(logs?.violations ?? [])];
    this.report.schedules.push({
      name: schedule.name,
      seed: schedule.seed,
      faults: result.faults.map((record) => record.description + (record.error === undefined ? '' : ` [${record.error}]`)),
      operations: operations.length,
      violations: violations.length,
      recoveredAfterMs: result.recoveredAfterMs === undefined ? undefined : Math.round(result.recoveredAfterMs),
      durationMs: Math.round(result.endedMs - result.startedMs),
    });
    for (const violation of violations) {
      this.report.violations.push({ schedule: schedule.name, seed: schedule.seed, text: describeViolation(violation) });
    }
    for (const note of logs?.notes ?? []) this.report.logNotes.push(`${schedule.name}: ${note}`);
    for (const operation of operations) {
      const label = `${unkeyed(operation) ? 'unkeyed' : keyed(operation) ? 'keyed' : 'read'} ${operation.outcome}`;
      this.report.operationsByOutcome[label] = (this.report.operationsByOutcome[label] ?? 0) + 1;
    }
    for (const record of result.faults) {
      const kind = record.spec.kind;
      let stats = this.byKind.get(kind);
      if (stats === undefined) {
        stats = {
          kind,
          count: 0,
          unkeyed: emptyShare(),
          keyed: emptyShare(),
          reads: emptyShare(),
          recoveryMs: [],
          notRecovered: 0,
          errors: [],
        };
        this.byKind.set(kind, stats);
      }
      stats.count++;
      if (record.error !== undefined) stats.errors.push(`${schedule.name}: ${record.description}: ${record.error}`);
      const during = operations.filter((operation) => operation.startMs >= record.appliedMs && operation.startMs < record.healedMs);
      addShare(stats.unkeyed, share(during, unkeyed));
      addShare(stats.keyed, share(during, keyed));
      addShare(stats.reads, share(during, isRead));
      const recovery = recoveryOf(record, operations);
      stats.recoveryMs.push(Math.round(recovery.recoveryMs));
      if (!recovery.recovered) stats.notRecovered++;
    }
  }

  addRunError(text: string): void {
    this.report.runErrors.push(text);
  }

  finish(): SoakReport {
    this.report.durationMs = Math.round(machineMonotonicMs() - this.startedMs);
    this.report.faultsByKind = [...this.byKind.values()];
    return this.report;
  }
}

const percent = (value: Share): string =>
  value.total === 0
    ? '-'
    : `${((100 * value.ok) / value.total).toFixed(1)}% of ${value.total} (unknown ${value.unknown}, failed ${value.failed})`;

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export function reportMarkdown(report: SoakReport): string {
  const lines = [
    `# Nemesis soak, ${report.startedAt}`,
    '',
    `${report.schedules.length} schedules in ${(report.durationMs / 60_000).toFixed(1)} min; ${report.violations.length} violations; ${report.runErrors.length} run errors.`,
    '',
    '## Faults by kind: availability while in place, recovery after the heal',
    '',
    'Calls started while a fault was in place: the share acknowledged (ok), and how many had an unknown outcome or certainly failed. Recovery, the one measure used here: from the heal to the end of the last call of the load that did not succeed before the next fault (or the end of the quiet period after the last).',
    '',
    '| kind | faults | unkeyed acked | keyed acked | exact reads ok | recovery median / max ms | still failing at next fault | apply/heal errors |',
    '|---|---|---|---|---|---|---|---|',
    ...report.faultsByKind.map(
      (stats) =>
        `| ${stats.kind} | ${stats.count} | ${percent(stats.unkeyed)} | ${percent(stats.keyed)} | ${percent(stats.reads)} | ${median(stats.recoveryMs)} / ${Math.max(0, ...stats.recoveryMs)} | ${stats.notRecovered} | ${stats.errors.length} |`,
    ),
    '',
    '## Operations',
    '',
    ...Object.entries(report.operationsByOutcome)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([label, count]) => `- ${label}: ${count}`),
    '',
    '## Schedules',
    '',
    'The probe column is not a recovery time: it is when a probe first found every counter writable and readable through every router after the last heal (a pass/fail gate for the quiet period, polled).',
    '',
    '| schedule | faults | operations | violations | probe passed after last heal (ms) | duration (ms) |',
    '|---|---|---|---|---|---|',
    ...report.schedules.map(
      (schedule) =>
        `| ${schedule.name} | ${schedule.faults.join('; ')} | ${schedule.operations} | ${schedule.violations} | ${schedule.recoveredAfterMs ?? 'never'} | ${schedule.durationMs} |`,
    ),
    '',
    '## Violations',
    '',
    ...(report.violations.length === 0
      ? ['None.']
      : report.violations.flatMap((violation) => [
          `### ${violation.schedule} (TALLY_NEMESIS_SEED=${violation.seed})`,
          '',
          '```',
          violation.text,
          '```',
          '',
        ])),
    '',
    '## Fault errors, run errors and log notes',
    '',
    ...report.faultsByKind.flatMap((stats) => stats.errors.map((error) => `- ${error}`)),
    ...report.runErrors.map((error) => `- run: ${error}`),
    ...report.logNotes.map((note) => `- log: ${note}`),
  ];
  return `${lines.join('\n')}\n`;
}
