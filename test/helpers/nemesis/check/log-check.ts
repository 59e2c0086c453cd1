// After a run, the nodes' logs compared pair by pair (read with better-sqlite3
// once the nodes are stopped): two nodes holding different entries at one lsn
// for one epoch means two primaries acknowledged different histories. Only
// reads; a log folded into its checkpoint is compared where both still hold rows.
import { recordChecksum } from '../../../../src/node/log/checksums.ts';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { decodeRecord, type RawRecord } from '../../../../src/node/log/index.ts';
import type { Violation } from './checker.ts';

interface LogRow {
  lsn: bigint;
  epoch: bigint;
  shard_id: bigint;
  amount: bigint;
  key: string;
  fence: bigint | null;
  kind: bigint | null;
  member: bigint | null;
  payload: string;
}

export interface LogComparison {
  violations: Violation[];
  /** Positions compared, and positions where the epochs differ (a tail not yet truncated: a note, not a violation). */
  comparedPositions: number;
  notes: string[];
}

function readLog(dataDir: string): Map<bigint, LogRow> | undefined {
  const file = path.join(dataDir, 'node.sqlite');
  if (!fs.existsSync(file)) return undefined;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare(
        'SELECT lsn, epoch, shard_id, amount, hex(idem_key) AS key, fence_shard_count AS fence, kind, member, hex(payload) AS payload FROM log ORDER BY lsn',
      )
      .safeIntegers(true)
      .all() as LogRow[];
    const entries = new Map(rows.map((row) => [row.lsn, row]));
    // Schema 8: plain increments packed in commit records, unpacked into the row shape they would have had.
    const hasRecords = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'records'").get() !== undefined;
    if (hasRecords) {
      // Schema 9 checksums each record; a schema-8 file's records are taken as they are.
      const hasCrc = (db.prepare("SELECT name FROM pragma_table_info('records')").pluck().all() as string[]).includes('crc');
      const records = (
        db
          .prepare(`SELECT first_lsn, last_lsn, epoch, at_ms, data, ${hasCrc ? 'crc' : 'NULL'} FROM records ORDER BY first_lsn`)
          .safeIntegers(true)
          .raw(true)
          .all() as RawRecord[]
      ).map((record): RawRecord => {
        if (hasCrc) return record;
        const [firstLsn, lastLsn, epoch, atMs, data] = record;
        return [firstLsn, lastLsn, epoch, atMs, data, BigInt(recordChecksum(firstLsn, lastLsn, epoch, atMs, data))];
      });
      for (const record of records) {
        for (const entry of decodeRecord(record)) {
          entries.set(entry.lsn, {
            lsn: entry.lsn,
            epoch: entry.epoch,
            shard_id: BigInt(entry.shardId),
            amount: entry.amount,
            key: '',
            fence: null,
            kind: null,
            member: null,
            payload: '',
          });
        }
      }
    }
    return entries;
  } finally {
    db.close();
  }
}

function rowText(row: LogRow): string {
  return `lsn=${row.lsn} epoch=${row.epoch} shard=${row.shard_id} amount=${row.amount}${row.key === '' ? '' : ` key=${Buffer.from(row.key, 'hex').toString('utf8')}`}${row.fence === null ? '' : ` fence=${row.fence}`}${row.kind === null ? '' : ` kind=${row.kind}`}`;
}

const sameEntry = (a: LogRow, b: LogRow): boolean =>
  a.shard_id === b.shard_id &&
  a.amount === b.amount &&
  a.key === b.key &&
  a.fence === b.fence &&
  (a.kind ?? 0n) === (b.kind ?? 0n) &&
  a.member === b.member &&
  a.payload === b.payload;

/** Compares the two logs of each pair: pairs maps a pair's name to its two nodes' data directories. */
export function compareLogs(pairs: ReadonlyMap<string, readonly [string, string]>): LogComparison {
  const result: LogComparison = { violations: [], comparedPositions: 0, notes: [] };
  for (const [pairName, [firstDir, secondDir]] of pairs) {
    const first = readLog(firstDir);
    const second = readLog(secondDir);
    if (first === undefined || second === undefined) {
      result.notes.push(`${pairName}: a log is missing (a wiped node not restarted); not compared`);
      continue;
    }
    const conflicts: string[] = [];
    let epochMismatches = 0;
    for (const [lsn, row] of first) {
      const other = second.get(lsn);
      if (other === undefined) continue;
      result.comparedPositions++;
      if (row.epoch !== other.epoch) epochMismatches++;
      else if (!sameEntry(row, other))
        conflicts.push(`${path.basename(firstDir)}: ${rowText(row)} | ${path.basename(secondDir)}: ${rowText(other)}`);
    }
    if (epochMismatches > 0)
      result.notes.push(`${pairName}: ${epochMismatches} positions hold entries of different epochs (an untruncated tail)`);
    if (conflicts.length > 0) {
      result.violations.push({
        rule: 'two-histories',
        counter: pairName,
        message: `${conflicts.length} log positions hold different entries for the same epoch on the two nodes of ${pairName}`,
        excerpt: conflicts.slice(0, 12),
      });
    }
  }
  return result;
}
