// The nemesis's history checker on hand-made histories: a safe one passes, and
// each rule fails the history built to break it. A checker that cannot fail
// would pass every chaos run; these keep it honest.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createOrUpgradeSchema } from '../../../src/node/log/log-schema.ts';
import {
  checkHistory,
  compareLogs,
  type IncrementOperation,
  type Operation,
  type ReadOperation,
  type Rule,
} from '../../helpers/nemesis/check/index.ts';

import { makeTempDir, removeTempDir } from '../../helpers/temp-dir.ts';

let nextId = 1;
function inc(
  startMs: number,
  endMs: number,
  amount: number,
  outcome: IncrementOperation['outcome'] = 'ok',
  extra: Partial<IncrementOperation> = {},
): IncrementOperation {
  return { id: nextId++, kind: 'increment', router: 0, counter: 'c', startMs, endMs, amount: BigInt(amount), outcome, ...extra };
}
function read(startMs: number, endMs: number, total: number, extra: Partial<ReadOperation> = {}): ReadOperation {
  return { id: nextId++, kind: 'read', router: 0, counter: 'c', startMs, endMs, outcome: 'ok', total: BigInt(total), ...extra };
}
const final = (startMs: number, total: number, router = 0): ReadOperation => read(startMs, startMs + 1, total, { final: true, router });
const rulesOf = (operations: Operation[]): Rule[] => [...new Set(checkHistory(operations).map((violation) => violation.rule))].sort();

describe('history checker', () => {
  it('a safe history with concurrent reads, unknowns, failures and a keyed retry has no violation', () => {
    const history = [
      inc(0, 10, 5),
      inc(5, 30, 3), // concurrent with the read below: it may or may not be in it
      read(12, 20, 5, { router: 1 }),
      read(12, 20, 8),
      inc(40, 50, 2, 'unknown'),
      inc(41, 45, 7, 'failed'),
      inc(60, 70, 4, 'unknown', { key: 'k1' }),
      inc(80, 90, 4, 'ok', { key: 'k1', router: 1 }),
      inc(100, 110, 4, 'ok', { key: 'k1', applied: false }), // a duplicate: must not count
      read(120, 130, 12, { router: 1 }), // the unknown +2 not (yet) in
      final(200, 14), // now it is: within [12, 14]
      final(201, 14, 1),
    ];
    expect(checkHistory(history)).toEqual([]);
  });

  it('a read missing an increment acknowledged before it began is a stale read', () => {
    expect(rulesOf([inc(0, 10, 5), read(11, 12, 0), final(20, 5)])).toEqual(['stale-read']);
  });

  it('a read below one that ended before it began, through another router, went back', () => {
    // The write is unknown: 0 and 3 are both allowed alone, but not 3 then 0.
    expect(rulesOf([inc(0, 10, 3, 'unknown'), read(11, 12, 3, { router: 0 }), read(13, 14, 0, { router: 1 }), final(20, 3)])).toEqual([
      'read-went-back',
    ]);
  });

  it('reads that overlap may return different totals in any order', () => {
    expect(rulesOf([inc(0, 10, 3, 'unknown'), read(11, 20, 3), read(12, 21, 0, { router: 1 }), final(30, 3)])).toEqual([]);
  });

  it('a read above everything that may have applied by its end is an over-count', () => {
    expect(rulesOf([inc(0, 10, 5), read(11, 12, 10)])).toEqual(['no-final-read', 'over-count']);
  });

  it('a keyed retry after an unknown outcome counts once; counted twice is an over-count and out of bounds', () => {
    const attempts = [inc(0, 10, 4, 'unknown', { key: 'k' }), inc(20, 30, 4, 'ok', { key: 'k', router: 1 })];
    expect(rulesOf([...attempts, final(40, 4)])).toEqual([]);
    expect(rulesOf([...attempts, final(40, 8)])).toEqual(['final-out-of-bounds', 'over-count']);
  });

  it('one key acknowledged as applied twice breaks G2 even when the totals look right', () => {
    expect(rulesOf([inc(0, 10, 4, 'ok', { key: 'k' }), inc(20, 30, 4, 'ok', { key: 'k' }), final(40, 4)])).toEqual(['key-applied-twice']);
  });

  it('a final total below the acknowledged sum is out of bounds (and stale)', () => {
    expect(rulesOf([inc(0, 10, 5), inc(0, 10, 2, 'unknown'), final(20, 4)])).toEqual(['final-out-of-bounds', 'stale-read']);
  });

  it('a final total above acknowledged + unknown is out of bounds', () => {
    expect(rulesOf([inc(0, 10, 5), inc(0, 10, 2, 'unknown'), read(5, 30, 9, { final: true })])).toEqual([
      'final-out-of-bounds',
      'over-count',
    ]);
  });

  it('a counter without a successful final read is reported', () => {
    expect(rulesOf([inc(0, 10, 5), read(20, 30, 5)])).toEqual(['no-final-read']);
  });

  it('a key sent with two different amounts is a broken history', () => {
    // The key's amounts are then left out of the bounds: the total of 5 is reported too.
    expect(rulesOf([inc(0, 10, 4, 'unknown', { key: 'k' }), inc(20, 30, 5, 'ok', { key: 'k' }), final(40, 5)])).toContain(
      'key-reused-differently',
    );
  });

  it('counters are checked apart', () => {
    const other = (operation: Operation): Operation => ({ ...operation, counter: 'd' });
    expect(rulesOf([inc(0, 10, 5), final(20, 5), other(inc(0, 10, 1)), other(final(20, 0))])).toEqual([
      'final-out-of-bounds',
      'stale-read',
    ]);
  });
});

describe('log comparison', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) removeTempDir(dir);
    dir = undefined;
  });

  /** A node's data directory with these log rows: [lsn, epoch, shard, amount]. */
  function nodeLog(name: string, rows: [number, number, number, number][]): string {
    const nodeDir = path.join(dir!, name);
    fs.mkdirSync(nodeDir);
    const file = path.join(nodeDir, 'node.sqlite');
    const db = new Database(file);
    createOrUpgradeSchema(db, file);
    const insert = db.prepare('INSERT INTO log (lsn, epoch, shard_id, amount, at_ms) VALUES (?, ?, ?, ?, 0)');
    for (const row of rows) insert.run(...row);
    db.close();
    return nodeDir;
  }

  it('two nodes with different entries at one lsn in one epoch are two histories', () => {
    dir = makeTempDir('log-check');
    const a = nodeLog('a', [
      [1, 1, 1, 5],
      [2, 1, 1, 3],
    ]);
    const b = nodeLog('b', [
      [1, 1, 1, 5],
      [2, 1, 2, 3],
    ]);
    const result = compareLogs(new Map([['pair 0', [a, b] as const]]));
    expect(result.violations.map((violation) => violation.rule)).toEqual(['two-histories']);
    expect(result.violations[0]!.excerpt[0]).toContain('lsn=2');
  });

  it('equal logs, a shorter follower, or an untruncated tail of another epoch are not violations', () => {
    dir = makeTempDir('log-check');
    const a = nodeLog('a', [
      [1, 1, 1, 5],
      [2, 1, 1, 3],
      [3, 2, 1, 1],
    ]);
    const b = nodeLog('b', [
      [1, 1, 1, 5],
      [2, 1, 1, 3],
      [3, 3, 2, 9],
    ]);
    const result = compareLogs(new Map([['pair 0', [a, b] as const]]));
    expect(result.violations).toEqual([]);
    expect(result.comparedPositions).toBe(3);
    expect(result.notes.join()).toContain('different epochs');
  });
});
