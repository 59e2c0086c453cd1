// Sends claimed rows to Tally as keyed increments: one IncrementBatch, and
// when Tally refuses it for a row's sake (an overflow, say), each row alone,
// so the bad ones are found and the rest still count. Touches no database.
import type { CallSettings, IncrementItem, IncrementOptions, IncrementResult } from '../client/index.ts';
import type { DeadRow } from './outbox.ts';
import { isRowRefusal, rowKey, type OutboxRow } from './row-check.ts';

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
  /** Refused by Tally for the row's sake: never applied. */
  dead: DeadRow[];
}

/** Rows sent one at a time at once when a batch is refused. */
const singleSendsInFlight = 16;

/**
 * Every row given must be sendable (rowProblem undefined). Resolves once each
 * row is acknowledged (applied or a duplicate) or refused; rejects, with
 * nothing known about which rows applied, on any other failure (the caller
 * rolls back and the rows are sent again, under the same keys).
 */
export async function sendRows(sender: IncrementSender, keyNamespace: string, rows: readonly OutboxRow[]): Promise<SendOutcome> {
  const outcome: SendOutcome = { applied: [], duplicates: [], dead: [] };
  if (rows.length === 0) return outcome;
  const items = rows.map((row) => ({ counter: row.counter!, amount: row.amount!, idempotencyKey: rowKey(keyNamespace, row.id) }));
  try {
    const results = await sender.incrementBatch(items);
    results.forEach((result, index) => (result.applied ? outcome.applied : outcome.duplicates).push(rows[index]!.id));
    return outcome;
  } catch (error) {
    if (!isRowRefusal(error)) throw error;
    if (rows.length === 1) {
      outcome.dead.push({ id: rows[0]!.id, reason: `${error.code}: ${error.message}` });
      return outcome;
    }
  }
  // Some row made Tally refuse the whole batch (nothing of it acknowledged,
  // though parts may have applied: the keys make sending them again safe).
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < rows.length) {
      const index = next++;
      const row = rows[index]!;
      try {
        const result = await sender.increment(items[index]!.counter, items[index]!.amount, {
          idempotencyKey: items[index]!.idempotencyKey,
        });
        (result.applied ? outcome.applied : outcome.duplicates).push(row.id);
      } catch (error) {
        if (!isRowRefusal(error)) throw error;
        outcome.dead.push({ id: row.id, reason: `${error.code}: ${error.message}` });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(singleSendsInFlight, rows.length) }, worker));
  return outcome;
}
