// Pure rules about one outbox row: its idempotency key, whether Tally would
// refuse it (such a row goes to the dead letters, never blocks the rest),
// and whether it may still be sent given when it was first sent.
import { createHash } from 'node:crypto';
import { ErrorCode, ErrorMetadataKey, TallyError, idempotencyKeyBytesMax, validateCounterName } from '../../wire/index.ts';

/** A row as claimed: bigints as PostgreSQL sends int8 (decimal text), parsed. */
export interface OutboxRow {
  id: bigint;
  /** null only when the user's table allows it; such a row is a dead letter. */
  counter: string | null;
  amount: bigint | null;
  /** Since created_at, on PostgreSQL's clock, when claimed. */
  ageMs: number;
  /** Since the row was first sent (the attempts table), or null if never. */
  attemptAgeMs: number | null;
}

/**
 * The row's key: the same whichever relay sends it and however often, so
 * Tally applies it once within the dedup window. The namespace keeps two
 * outboxes feeding one counter apart; one too long to fit is hashed.
 */
export function rowKey(namespace: string, id: bigint): string {
  const key = `outbox:${namespace}:${id}`;
  if (Buffer.byteLength(key) <= idempotencyKeyBytesMax) return key;
  return `outbox:${createHash('sha256').update(namespace).digest('hex').slice(0, 32)}:${id}`;
}

/** Why Tally would refuse the row (the dead letter's reason), or undefined when it may be sent. */
export function rowProblem(row: Pick<OutboxRow, 'counter' | 'amount'>): string | undefined {
  if (row.counter === null) return 'invalid_argument: counter is null';
  if (row.amount === null) return 'invalid_argument: amount is null';
  if (row.amount === 0n) return 'invalid_argument: amount is 0';
  try {
    validateCounterName(row.counter);
  } catch (error) {
    if (error instanceof TallyError) return `${error.code}: ${error.message}`;
    throw error;
  }
  return undefined;
}

/** Rows split into those Tally may take and the dead letters (with Tally's reason) it would refuse. */
export function splitSendable<Row extends Pick<OutboxRow, 'id' | 'counter' | 'amount'>>(
  rows: readonly Row[],
): { sendable: Row[]; dead: { id: bigint; reason: string }[] } {
  const sendable: Row[] = [];
  const dead: { id: bigint; reason: string }[] = [];
  for (const row of rows) {
    const problem = rowProblem(row);
    if (problem === undefined) sendable.push(row);
    else dead.push({ id: row.id, reason: problem });
  }
  return { sendable, dead };
}

/**
 * How long after its first send a row may still be sent again: nine tenths
 * of the dedup window. The attempt is stamped before the send, on
 * PostgreSQL's clock, and the node's window starts at arrival, later; the
 * tenth left over absorbs the two clocks' disagreement.
 */
export function resendLimitMs(dedupWindowMs: number): number {
  return Math.floor(dedupWindowMs * 0.9);
}

/** Whether a row's first send may be older than the dedup window allows a re-send for. */
export function isBeyondWindow(row: Pick<OutboxRow, 'attemptAgeMs'>, dedupWindowMs: number): boolean {
  return row.attemptAgeMs !== null && row.attemptAgeMs >= resendLimitMs(dedupWindowMs);
}

/** The directory cap that refused a call (RESOURCE_EXHAUSTED naming it in its ErrorInfo metadata), or undefined. */
export function capOf(error: unknown): string | undefined {
  if (!(error instanceof TallyError) || error.code !== ErrorCode.resourceExhausted) return undefined;
  return error.metadata[ErrorMetadataKey.cap];
}

/**
 * A refusal for the rows' sake (a row at fault, or a directory cap that a
 * smaller call may pass), as opposed to the cluster being unable now (a busy
 * RESOURCE_EXHAUSTED without a cap is retried with backoff, never split).
 */
export function isRowRefusal(error: unknown): error is TallyError {
  return (
    error instanceof TallyError &&
    (error.code === ErrorCode.invalidArgument ||
      error.code === ErrorCode.outOfRange ||
      error.code === ErrorCode.failedPrecondition ||
      capOf(error) !== undefined)
  );
}
