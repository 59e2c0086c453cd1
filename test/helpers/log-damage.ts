// Damage a stopped node's log as a failing disk would: a torn write under
// later commits or a corrupted page (bytes overwritten in a leaf page of the
// log table), which the node must refuse when it starts; or as a crash would:
// a commit cut short mid-frame after the last one, which it must serve without
// that commit. For chaos tests and the nemesis; the node must be stopped
// first (SIGKILL).
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { readWalLayout } from '../../src/node/log/check/wal-frames.ts';
import { seededRandom } from './seeded-random.ts';

/** The log database in a node's data directory. */
export function logFileIn(dataDir: string): string {
  return path.join(dataDir, 'node.sqlite');
}

/**
 * A torn write under later commits: half of the page of the commit frame
 * commitsCut commits from the end (fewer when the file holds fewer; never
 * the last) overwritten with zeros, the commits after it left in place, as a
 * disk that acknowledged a write it had not made durable leaves it. The node
 * must refuse the log: SQLite would stop at the damage and drop every commit
 * after it. Undefined when the write-ahead file holds fewer than two commits.
 */
export function tearWal(dataDir: string, commitsCut: number): string | undefined {
  const walFile = `${logFileIn(dataDir)}-wal`;
  if (!fs.existsSync(walFile)) return undefined;
  const layout = readWalLayout(fs.readFileSync(walFile));
  if (layout === undefined || layout.commitEnds.length < 2) return undefined;
  const commitEnd = layout.commitEnds[Math.max(0, layout.commitEnds.length - 1 - Math.max(1, commitsCut))]!;
  const zeros = Buffer.alloc(Math.floor(layout.pageSizeBytes / 2));
  const fd = fs.openSync(walFile, 'r+');
  try {
    fs.writeSync(fd, zeros, 0, zeros.length, commitEnd - zeros.length);
  } finally {
    fs.closeSync(fd);
  }
  return `zeroed ${zeros.length} bytes of ${walFile} before byte ${commitEnd}, under ${layout.commitEnds.length} commits`;
}

/**
 * A commit a crash cut short: after the write-ahead file's last whole frame,
 * the header of a commit frame of this generation (its salts) and half of
 * its page, as a SIGKILL between SQLite's two writes of a frame leaves it.
 * That commit was never acknowledged (Tally answers after the fsync): the
 * node must serve the log without it. Undefined when there is no write-ahead file.
 */
export function cutWalMidFrame(dataDir: string): string | undefined {
  const walFile = `${logFileIn(dataDir)}-wal`;
  if (!fs.existsSync(walFile)) return undefined;
  const wal = fs.readFileSync(walFile);
  const layout = readWalLayout(wal);
  if (layout === undefined || layout.frameBytes === 0) return undefined;
  const partial = Buffer.alloc(24 + Math.floor(layout.pageSizeBytes / 2), 0x5a);
  partial.writeUInt32BE(1, 0);
  partial.writeUInt32BE(1, 4);
  wal.copy(partial, 8, 16, 24);
  const wholeEnd = 32 + layout.validFrames * layout.frameBytes;
  fs.truncateSync(walFile, wholeEnd);
  fs.appendFileSync(walFile, partial);
  return `appended ${partial.length} bytes of a frame to ${walFile} at byte ${wholeEnd}`;
}

/**
 * A stored value moved: the lowest bit of the newest commit record's last
 * amount flipped (still a valid varint: the amount moves by one), or, with no
 * record, the newest keyed row's amount moved by one. The page passes
 * quick_check and the entry its shape check; only its checksum tells. The
 * node must refuse the log when it reads it. Undefined when the log holds
 * neither (all folded).
 */
export function moveStoredValue(dataDir: string): string | undefined {
  const db = new Database(logFileIn(dataDir));
  try {
    db.pragma('busy_timeout = 5000');
    const record = db.prepare('SELECT first_lsn, data FROM records ORDER BY first_lsn DESC LIMIT 1').raw().get() as
      [number, Buffer] | undefined;
    if (record !== undefined) {
      const data = Buffer.from(record[1]);
      data[data.length - 1]! ^= 0x01;
      db.prepare('UPDATE records SET data = ? WHERE first_lsn = ?').run(data, record[0]);
      return `flipped the last bit of the record at lsn ${record[0]}`;
    }
    const row = db
      .prepare('UPDATE log SET amount = amount + 1 WHERE lsn = (SELECT max(lsn) FROM log WHERE idem_key IS NOT NULL AND amount != 0)')
      .run();
    return row.changes === 0 ? undefined : 'moved the newest keyed amount by one';
  } finally {
    db.close();
  }
}

/**
 * A corrupted page: the write-ahead file folded into the database (as the
 * node's next open would), then the b-tree header and cell pointers of a
 * leaf page of the log table, from its middle, overwritten with seeded bytes.
 */
export function corruptLogPage(dataDir: string, seed: number): string {
  const file = logFileIn(dataDir);
  const db = new Database(file);
  let pageNumber: number;
  let pageSizeBytes: number;
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    pageSizeBytes = db.pragma('page_size', { simple: true }) as number;
    const pages = db
      .prepare("SELECT pageno FROM dbstat WHERE name = 'log' AND pagetype = 'leaf' ORDER BY pageno")
      .pluck()
      .all() as number[];
    if (pages.length === 0) throw new Error(`the log table of ${file} has no leaf page`);
    pageNumber = pages[Math.floor(pages.length / 2)]!;
  } finally {
    db.close();
  }
  const random = seededRandom(seed);
  const garbage = Buffer.from(Array.from({ length: 64 }, () => Math.floor(random() * 256)));
  const fd = fs.openSync(file, 'r+');
  try {
    fs.writeSync(fd, garbage, 0, garbage.length, (pageNumber - 1) * pageSizeBytes);
  } finally {
    fs.closeSync(fd);
  }
  return `overwrote the first ${garbage.length} bytes of page ${pageNumber} of ${file}`;
}
