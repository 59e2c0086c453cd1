// What the load generator did: one record per call, with its outcome and its
// start and end on the machine's monotonic clock (CLOCK_MONOTONIC, the same in
// every process, so the harness's fault times line up with them). Only records
// and their wire form; the checker decides what they mean.
export type Outcome = 'ok' | 'failed' | 'unknown';

/** Milliseconds on CLOCK_MONOTONIC: comparable across the processes of one machine, never stepped. */
export function machineMonotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

interface OperationBase {
  /** Unique in one history. */
  id: number;
  /** The router (index) the call went to. */
  router: number;
  counter: string;
  startMs: number;
  endMs: number;
  outcome: Outcome;
  /** Why it failed or is unknown (gRPC status and message). */
  error?: string;
}

export interface IncrementOperation extends OperationBase {
  kind: 'increment';
  amount: bigint;
  /** Keyed increments only; a retry after an unknown outcome carries the same key (and amount). */
  key?: string;
  /** From an ok result: false when the key had already been applied. */
  applied?: boolean;
}

export interface ReadOperation extends OperationBase {
  kind: 'read';
  /** An ok EXACT read's total. */
  total?: bigint;
  /** Read after the faults healed and the load stopped: the total the final bounds apply to. */
  final?: boolean;
}

export type Operation = IncrementOperation | ReadOperation;

/** An operation as one JSON line: bigints as decimal strings. */
export function operationToJson(operation: Operation): string {
  return JSON.stringify(operation, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
}

export function operationFromJson(value: Record<string, unknown>): Operation {
  if (value.kind === 'increment') return { ...(value as unknown as IncrementOperation), amount: BigInt(value.amount as string) };
  const read = value as unknown as ReadOperation;
  return value.total === undefined ? read : { ...read, total: BigInt(value.total as string) };
}

/** Operations in the order they were recorded, with lookups the checker and the report need. */
export class History {
  readonly operations: Operation[] = [];

  add(operation: Operation): void {
    this.operations.push(operation);
  }

  counters(): string[] {
    return [...new Set(this.operations.map((operation) => operation.counter))].sort();
  }

  /** Operations that started in [fromMs, toMs). */
  startedWithin(fromMs: number, toMs: number): Operation[] {
    return this.operations.filter((operation) => operation.startMs >= fromMs && operation.startMs < toMs);
  }

  /** Counts by kind and outcome: "increment ok" -> n. */
  countsByOutcome(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const operation of this.operations) {
      const label = `${operation.kind === 'increment' ? (operation.key === undefined ? 'unkeyed' : 'keyed') : 'read'} ${operation.outcome}`;
      counts[label] = (counts[label] ?? 0) + 1;
    }
    return counts;
  }
}

/** A few operations as text lines, for a violation's excerpt. */
export function describeOperation(operation: Operation): string {
  const times = `${operation.startMs.toFixed(1)}..${operation.endMs.toFixed(1)}`;
  if (operation.kind === 'read')
    return `#${operation.id} read ${operation.counter} via r${operation.router} [${times}] ${operation.outcome}${operation.total === undefined ? '' : ` total=${operation.total}`}${operation.final ? ' (final)' : ''}${operation.error ? ` ${operation.error}` : ''}`;
  return `#${operation.id} inc ${operation.counter} +${operation.amount}${operation.key === undefined ? '' : ` key=${operation.key}`} via r${operation.router} [${times}] ${operation.outcome}${operation.applied === false ? ' (not applied: duplicate)' : ''}${operation.error ? ` ${operation.error}` : ''}`;
}
