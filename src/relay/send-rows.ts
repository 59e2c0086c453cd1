// Sends claimed rows to Tally as keyed increments: one IncrementBatch, and
// when Tally refuses it for its rows' sake (an overflow, a directory cap),
// halves of it, down to single rows, so the refused rows are found and the
// rest still count. Touches no database.
import type { CallSettings, IncrementItem, IncrementOptions, IncrementResult } from '../client/index.ts';
import type { DeadRow } from './outbox/index.ts';
import { capOf, isRowRefusal, rowKey, type OutboxRow } from './outbox/index.ts';

/** The two calls the relay makes (a role interface: tests fake it in a few lines). */
export interface IncrementSender {
  incrementBatch(items: readonly IncrementItem[], settings?: CallSettings): Promise<IncrementResult[]>;
  increment(counter: string, amount: bigint, options?: IncrementOptions): Promise<IncrementResult>;
}

export interface SendOutcome {
  /** Applied by this send. */
  applied: bigint[];
  /** Already applied by an earlier send (a relay that crashed before its commit). */
  duplicates: bigint[];
  /** Refused by Tally for the row's sake, alone: never applied. */
  dead: DeadRow[];
}

/** Parts of a refused batch in flight at once. */
const partsInFlightMax = 16;

/** The dead letter of a row Tally refused alone: a cap's own reason, else the error's code. */
function deadRowOf(row: OutboxRow, error: Error & { code: string }): DeadRow {
  const cap = capOf(error);
  return cap === undefined
    ? { id: row.id, reason: `${error.code}: ${error.message}` }
    : { id: row.id, reason: `cap_exceeded: ${error.message}`, cap };
}

/**
 * Every row given must be sendable (rowProblem undefined). Resolves once each
 * row is acknowledged (applied or a duplicate) or refused alone; rejects, with
 * nothing known about which rows applied, on any other failure (a busy
 * cluster, a failover: the caller rolls back and the rows are sent again,
 * under the same keys).
 */
export async function sendRows(sender: IncrementSender, keyNamespace: string, rows: readonly OutboxRow[]): Promise<SendOutcome> {
  const items = rows.map((row) => ({ counter: row.counter!, amount: row.amount!, idempotencyKey: rowKey(keyNamespace, row.id) }));
  // Per row: its answer, or its dead letter. Filled in any order, read in row order.
  const answers: (IncrementResult | DeadRow | undefined)[] = new Array(rows.length);
  let inFlight = 0;
  const waiting: (() => void)[] = [];
  const slot = async (): Promise<void> => {
    while (inFlight >= partsInFlightMax) await new Promise<void>((resolve) => waiting.push(resolve));
    inFlight++;
  };
  const release = (): void => {
    inFlight--;
    waiting.shift()?.();
  };
  // A refused batch applied nothing it acknowledged (parts may have applied:
  // the keys make sending them again safe), so each half goes again alone.
  const send = async (start: number, end: number): Promise<void> => {
    await slot();
    let refusal: (Error & { code: string }) | undefined;
    try {
      const results = await sender.incrementBatch(items.slice(start, end));
      results.forEach((result, index) => (answers[start + index] = result));
      return;
    } catch (error) {
      if (!isRowRefusal(error)) throw error;
      refusal = error;
    } finally {
      release();
    }
    if (end - start === 1) {
      answers[start] = deadRowOf(rows[start]!, refusal);
      return;
    }
    const middle = start + Math.ceil((end - start) / 2);
    await Promise.all([send(start, middle), send(middle, end)]);
  };
  if (rows.length > 0) await send(0, rows.length);
  const outcome: SendOutcome = { applied: [], duplicates: [], dead: [] };
  answers.forEach((answer, index) => {
    if (answer === undefined) throw new Error(`sendRows: row ${rows[index]!.id} has no answer`);
    if ('reason' in answer) outcome.dead.push(answer);
    else (answer.applied ? outcome.applied : outcome.duplicates).push(rows[index]!.id);
  });
  return outcome;
}
