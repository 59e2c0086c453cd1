// Recounting from the journal: a counter fed only through the outbox must
// read exactly the sum of its archived rows. Checked under the exclusive
// lock, so no row sits between Tally's acknowledgement and its archive; rows
// a crashed relay left of unknown fate are sent again (same keys) first.
import { createHash } from 'node:crypto';
import type { ReadResult } from '../client/index.ts';
import { readManyCountersMax } from '../wire/index.ts';
import type { Outbox } from './outbox/index.ts';
import { isBeyondWindow, splitSendable, type OutboxRow } from './outbox/index.ts';
import { sendRows, type IncrementSender } from './send-rows.ts';

/** What a recount reads besides sending: a role interface over the client. */
export interface RecountClient extends IncrementSender {
  read(counter: string, options?: { consistency?: 'exact' | 'cached' }): Promise<ReadResult>;
  readMany(counters: readonly string[], options?: { consistency?: 'exact' | 'cached' }): Promise<ReadResult[]>;
}

/** Unfinished rows one recount sends before it reads; more means the relays are far behind: let them catch up first. */
const unfinishedRowsMax = 10_000;

export interface RecountReport {
  counter: string;
  archivedRows: bigint;
  archivedSum: bigint;
  /** Tally's exact total at the check. */
  total: bigint;
  /** total - archivedSum: 0 on a healthy counter. */
  drift: bigint;
  /** Rows of unknown fate sent again (under their keys) before the check. */
  resentRows: number;
  /** Whether a correction of -drift was sent (--repair with drift). */
  repaired: boolean;
  /** False when the correction's key had applied before: an earlier repair (a late one) landed instead. */
  repairApplied: boolean;
  /** With repairApplied false: the drift read again after it (an earlier repair may have corrected another amount). */
  driftAfterRepair?: bigint;
  /**
   * Rows first sent longer ago than the dedup window allows a re-send:
   * nothing was repaired. Each counted or not; the drift says which
   * (drift = their sum: counted; drift = 0: not) for tally relay --resolve.
   */
  beyondWindow: { id: bigint; amount: bigint }[];
}

/**
 * The correction's key: the counter and the number of its repair under this
 * namespace (one more than the repairs recorded, committed only once Tally
 * answered). A repair whose call timed out leaves that number unrecorded,
 * so the next repair sends the same key whatever has moved meanwhile: if the
 * first lands late, one of the two is a duplicate and the counter is
 * corrected once. The amount is not in the key: a late repair and the next
 * one correct the same drift, however it was measured.
 */
export function repairKey(keyNamespace: string, counter: string, repairNumber: bigint): string {
  const digest = createHash('sha256').update(JSON.stringify([keyNamespace, counter, String(repairNumber)]));
  return `recount:${digest.digest('hex').slice(0, 48)}`;
}

/** Sends unfinished rows again and takes them out (inside the caller's transaction). */
async function finishUnfinished(outbox: Outbox, client: IncrementSender, rows: readonly OutboxRow[]): Promise<number> {
  const { sendable, dead } = splitSendable(rows);
  const outcome = await sendRows(client, outbox.keyNamespace, sendable);
  await outbox.takeOut([...outcome.applied, ...outcome.duplicates], [...dead, ...outcome.dead]);
  return rows.length;
}

export async function recount(
  outbox: Outbox,
  client: RecountClient,
  counter: string,
  options: { repair: boolean; dedupWindowMs: number },
): Promise<RecountReport> {
  await outbox.beginExclusive();
  try {
    const unfinished = await outbox.claimUnfinished([counter], unfinishedRowsMax + 1);
    if (unfinished.length > unfinishedRowsMax)
      throw new Error(`${counter} has more than ${unfinishedRowsMax} rows of unknown fate in the outbox: let a relay finish them first`);
    const beyond = unfinished.filter((row) => isBeyondWindow(row, options.dedupWindowMs));
    const resentRows = beyond.length === 0 ? await finishUnfinished(outbox, client, unfinished) : 0;
    const sum = (await outbox.archivedSums([counter])).get(counter)!;
    const { total } = await client.read(counter, { consistency: 'exact' });
    const drift = total - sum.sum;
    const report: RecountReport = {
      counter,
      archivedRows: sum.rows,
      archivedSum: sum.sum,
      total,
      drift,
      resentRows,
      repaired: false,
      repairApplied: false,
      beyondWindow: beyond.map((row) => ({ id: row.id, amount: row.amount ?? 0n })),
    };
    if (options.repair && drift !== 0n && beyond.length === 0) {
      const repairNumber = await outbox.nextRepairNumber(counter);
      const result = await client.increment(counter, -drift, {
        idempotencyKey: repairKey(outbox.keyNamespace, counter, repairNumber),
      });
      // Answered: the number is spent, applied or not (a duplicate is an earlier repair, landed).
      await outbox.recordRepair(counter, repairNumber, -drift, result.applied);
      report.repaired = true;
      report.repairApplied = result.applied;
      if (!result.applied) {
        // An earlier repair under this key landed instead: what is left is read again.
        const after = (await client.read(counter, { consistency: 'exact' })).total;
        report.driftAfterRepair = after - sum.sum;
      }
    }
    await outbox.commit();
    return report;
  } catch (error) {
    await outbox.rollback();
    throw error;
  }
}

/**
 * The relay's --reconcile-every: the same check for many counters at once,
 * without repairing. A counter with rows of unknown fate is left out of
 * this round (the relay is about to finish them). Returns drift per counter.
 */
export async function reconcile(outbox: Outbox, client: RecountClient, counters: readonly string[]): Promise<Map<string, bigint>> {
  const drifts = new Map<string, bigint>();
  if (counters.length === 0) return drifts;
  await outbox.beginExclusive();
  try {
    const unsettled = new Set((await outbox.claimUnfinished(counters, unfinishedRowsMax)).map((row) => row.counter));
    const settled = counters.filter((counter) => !unsettled.has(counter));
    const sums = await outbox.archivedSums(settled);
    for (let start = 0; start < settled.length; start += readManyCountersMax) {
      const chunk = settled.slice(start, start + readManyCountersMax);
      const reads = await client.readMany(chunk, { consistency: 'exact' });
      reads.forEach((read, index) => drifts.set(chunk[index]!, read.total - sums.get(chunk[index]!)!.sum));
    }
    await outbox.commit();
    return drifts;
  } catch (error) {
    await outbox.rollback();
    throw error;
  }
}
