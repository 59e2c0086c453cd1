// Unit tests for the log's start-up check on real SQLite files in temp dirs:
// a write-ahead frame damaged under a later commit, a page overwritten, a
// truncated file and a mark left by a run that found damage each fail it and
// are set aside (never deleted); a whole log, a commit cut short after the
// last one (G1: discarded, the log served), a write-ahead file reused after a
// checkpoint and a missing file pass; a damaged read while running is told to onDamage.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { ShardLog, type LogEntry } from '../../../../src/node/log/index.ts';
import { checkLogAtStart, isDamagedLog, logProblem, markLogCorrupt } from '../../../../src/node/log/check/log-check.ts';
import { readWalLayout } from '../../../../src/node/log/check/wal-frames.ts';
import { useTempLogs } from '../../../helpers/temp-log.ts';

function entries(count: number, from = 0): LogEntry[] {
  return Array.from({ length: count }, (_, index) => ({
    shardId: 1 + ((from + index) % 8),
    amount: BigInt(from + index + 1),
    idempotencyKey: Buffer.from(`key-${from + index}`),
    fenceShardCount: 0,
  }));
}

/** A log of `commits` transactions of 50 rows, left as a SIGKILL leaves it: its write-ahead file in place. */
function killedLog(open: () => ShardLog, commits: number): { log: ShardLog; file: string; walCopy: Buffer } {
  const log = open();
  for (let commit = 0; commit < commits; commit++) log.append(entries(50, commit * 50), 1n, 1_000);
  // A copy taken while the connection is open: closing folds the write-ahead file in and removes it.
  const walCopy = fs.readFileSync(`${log.file}-wal`);
  return { log, file: log.file, walCopy };
}

/** Leaf pages of the log table, and the page size, through SQLite's dbstat. */
function logLeafPages(file: string): { pages: number[]; pageSizeBytes: number } {
  const db = new Database(file, { readonly: true });
  try {
    const pages = db
      .prepare("SELECT pageno FROM dbstat WHERE name = 'log' AND pagetype = 'leaf' ORDER BY pageno")
      .pluck()
      .all() as number[];
    return { pages, pageSizeBytes: db.pragma('page_size', { simple: true }) as number };
  } finally {
    db.close();
  }
}

function overwrite(file: string, offset: number, bytes: Buffer): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.writeSync(fd, bytes, 0, bytes.length, offset);
  } finally {
    fs.closeSync(fd);
  }
}

describe('log check', () => {
  const { open, reopen } = useTempLogs('log-check');

  it('a whole log passes, and so does a data directory with no log yet', () => {
    const { log, file } = killedLog(open, 5);
    expect(readWalLayout(fs.readFileSync(`${file}-wal`))).toMatchObject({ torn: undefined, commitEnds: expect.any(Array) });
    expect(logProblem(file)).toBeUndefined();
    log.close();
    expect(logProblem(file)).toBeUndefined();
    expect(logProblem(path.join(path.dirname(file), 'absent', 'node.sqlite'))).toBeUndefined();
  });

  it('the write-ahead layout agrees with SQLite: as many valid frames as SQLite replays', () => {
    const { log, file } = killedLog(open, 7);
    const layout = readWalLayout(fs.readFileSync(`${file}-wal`))!;
    const db = new Database(file);
    try {
      const [checkpoint] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
      expect(layout.validFrames).toBe(checkpoint?.log);
    } finally {
      db.close();
    }
    expect(layout.commitEnds.length).toBeGreaterThanOrEqual(7);
    log.close();
  });

  it('a write-ahead file that ends mid-frame after its last commit (a crash cut a commit short) passes: SQLite discards the partial commit and the log keeps its identity and every commit before it', () => {
    const { log, file } = killedLog(open, 6);
    const nodeId = log.nodeId;
    const wal = fs.readFileSync(`${file}-wal`);
    const layout = readWalLayout(wal)!;
    // SIGKILL keeps the files as they are; the copy stands for the disk after the crash.
    const cutAt = layout.commitEnds.at(-2)! - Math.floor(layout.frameBytes / 2);
    const dir = path.dirname(file);
    const copyDir = fs.mkdtempSync(`${dir}-copy-`);
    const copied = path.join(copyDir, 'node.sqlite');
    fs.copyFileSync(file, copied);
    fs.writeFileSync(`${copied}-wal`, wal.subarray(0, cutAt));
    log.close();

    expect(readWalLayout(wal.subarray(0, cutAt))).toMatchObject({
      torn: undefined,
      discardedTail: expect.stringMatching(/ends \d+ bytes into frame/),
    });
    // The check's own open (quick_check) recovers as SQLite does and folds the write-ahead file in.
    const check = checkLogAtStart(copied, 1_700_000_000_000);
    expect(check).toMatchObject({ problem: undefined, setAside: [], discardedTail: expect.stringMatching(/into frame/) });
    const kept = ShardLog.open(copyDir);
    try {
      // Four whole commits of 50 remain; the fifth was cut short, the sixth never reached the disk.
      expect(kept.lastLsn).toBe(200n);
      expect(kept.nodeId).toBe(nodeId);
      kept.append(entries(1, 900), 1n, 3_000);
      expect(kept.lastLsn).toBe(201n);
    } finally {
      kept.close();
    }
    expect(logProblem(copied)).toBeUndefined();
    fs.rmSync(copyDir, { recursive: true, force: true });
  });

  it('a partial frame appended after the last commit (its header and half a page, as a SIGKILL between the two writes leaves it) passes and the log serves every commit', () => {
    const { log, file, walCopy } = killedLog(open, 5);
    const nodeId = log.nodeId;
    const layout = readWalLayout(walCopy)!;
    expect(layout.commitEnds.at(-1)).toBe(walCopy.length);
    // A frame header of this generation (its salts), a commit mark, then half of a page.
    const partial = Buffer.alloc(24 + Math.floor(layout.pageSizeBytes / 2), 0x5a);
    partial.writeUInt32BE(2, 0);
    partial.writeUInt32BE(99, 4);
    walCopy.copy(partial, 8, 16, 24);
    const dir = path.dirname(file);
    const copyDir = fs.mkdtempSync(`${dir}-copy-`);
    const copied = path.join(copyDir, 'node.sqlite');
    fs.copyFileSync(file, copied);
    fs.writeFileSync(`${copied}-wal`, Buffer.concat([walCopy, partial]));
    log.close();

    const check = checkLogAtStart(copied, 1);
    expect(check).toMatchObject({ problem: undefined, setAside: [], discardedTail: expect.stringMatching(/into frame/) });
    const kept = ShardLog.open(copyDir);
    try {
      expect(kept.lastLsn).toBe(250n);
      expect(kept.nodeId).toBe(nodeId);
    } finally {
      kept.close();
      fs.rmSync(copyDir, { recursive: true, force: true });
    }
  });

  it('a whole last frame whose page is stale (a header written over a reused file, the page not yet) is a cut-short commit, not a torn log', () => {
    const { log, walCopy } = killedLog(open, 6);
    const layout = readWalLayout(walCopy)!;
    const flipped = Buffer.from(walCopy);
    flipped[layout.commitEnds.at(-1)! - 100]! ^= 0x40;
    expect(readWalLayout(flipped)).toMatchObject({
      torn: undefined,
      discardedTail: expect.stringMatching(/checksum fails, and no commit follows it/),
    });
    expect(readWalLayout(flipped)!.validFrames).toBeLessThan(layout.validFrames);
    log.close();
  });

  it('a frame damaged under a later commit is torn (an acknowledged commit may lie past it): the files are set aside and the log reopens empty under a new identity', () => {
    const { log, file, walCopy } = killedLog(open, 6);
    const nodeId = log.nodeId;
    const layout = readWalLayout(walCopy)!;
    const damaged = Buffer.from(walCopy);
    damaged.fill(0, layout.commitEnds.at(-3)! - 1_000, layout.commitEnds.at(-3)! - 500);
    const dir = path.dirname(file);
    const copyDir = fs.mkdtempSync(`${dir}-copy-`);
    const copied = path.join(copyDir, 'node.sqlite');
    fs.copyFileSync(file, copied);
    fs.writeFileSync(`${copied}-wal`, damaged);
    log.close();

    expect(logProblem(copied)).toMatch(/write-ahead file is torn: frame \d+ .* checksum fails, under the commit at frame \d+/);
    const check = checkLogAtStart(copied, 1_700_000_000_000);
    expect(check.problem).toMatch(/torn/);
    expect(check.setAside.sort()).toEqual([`${copied}-wal.corrupt-1700000000000`, `${copied}.corrupt-1700000000000`]);
    expect(fs.readFileSync(`${copied}-wal.corrupt-1700000000000`)).toEqual(damaged);
    const fresh = ShardLog.open(copyDir);
    try {
      expect(fresh.lastLsn).toBe(0n);
      expect(fresh.nodeId).not.toBe(nodeId);
    } finally {
      fresh.close();
      fs.rmSync(copyDir, { recursive: true, force: true });
    }
  });

  it('a page of the log table overwritten in the database file fails quick_check and is set aside', () => {
    const first = open();
    for (let commit = 0; commit < 40; commit++) first.append(entries(50, commit * 50), 1n, 1_000);
    const log = reopen(first);
    const file = log.file;
    log.close();
    const { pages, pageSizeBytes } = logLeafPages(file);
    expect(pages.length).toBeGreaterThan(10);
    const page = pages[Math.floor(pages.length / 2)]!;
    overwrite(file, (page - 1) * pageSizeBytes, Buffer.alloc(48, 0xa5));
    expect(logProblem(file)).toMatch(/quick_check|SQLite/);
    const check = checkLogAtStart(file, 1);
    expect(check.setAside).toContain(`${file}.corrupt-1`);
    expect(fs.existsSync(file)).toBe(false);
  });

  it('a truncated database file and a damaged first page fail', () => {
    const first = open();
    for (let commit = 0; commit < 20; commit++) first.append(entries(50, commit * 50), 1n, 1_000);
    const log = reopen(first);
    const file = log.file;
    log.close();
    const whole = fs.readFileSync(file);
    fs.truncateSync(file, Math.floor(whole.length / 2));
    expect(logProblem(file)).toMatch(/malformed|quick_check/);
    fs.writeFileSync(file, whole);
    expect(logProblem(file)).toBeUndefined();
    overwrite(file, 100, Buffer.alloc(32, 0x5a));
    expect(logProblem(file)).toMatch(/malformed|quick_check/);
  });

  it('a log marked corrupt by a running node fails the next check even though its pages pass, and the mark goes aside with it', () => {
    const { log, file } = killedLog(open, 2);
    log.close();
    markLogCorrupt(file, 'database disk image is malformed');
    expect(logProblem(file)).toBe('an earlier run found it corrupt: database disk image is malformed');
    const check = checkLogAtStart(file, 7);
    expect(check.setAside).toContain(`${file}-corrupt.corrupt-7`);
    expect(logProblem(file)).toBeUndefined();
  });

  it('a read that finds a damaged page while running is told to onDamage before it throws', () => {
    const first = open();
    for (let commit = 0; commit < 40; commit++) first.append(entries(50, commit * 50), 1n, 1_000);
    first.close();
    const file = first.file;
    const { pages, pageSizeBytes } = logLeafPages(file);
    overwrite(file, (pages[Math.floor(pages.length / 2)]! - 1) * pageSizeBytes, Buffer.alloc(48, 0xa5));
    const log = ShardLog.open(path.dirname(file));
    const seen: unknown[] = [];
    log.onDamage = (error) => seen.push(error);
    try {
      expect(() => log.readFrom(1n, 100_000)).toThrow();
      expect(seen).toHaveLength(1);
      expect(isDamagedLog(seen[0])).toBe(true);
    } finally {
      log.close();
    }
  });
});
