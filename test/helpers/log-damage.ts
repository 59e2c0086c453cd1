// Damage a stopped node's log as a failing disk would: a torn write (the
// write-ahead file cut mid-frame) or a corrupted page (bytes overwritten in a
// leaf page of the log table). For chaos tests and the nemesis; the node must
// be stopped first (SIGKILL), and it must refuse the damaged log when it starts.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { readWalLayout } from '../../src/node/log/wal-frames.ts';
import { seededRandom } from './seeded-random.ts';

/** The log database in a node's data directory. */
export function logFileIn(dataDir: string): string {
  return path.join(dataDir, 'node.sqlite');
}

/**
 * A torn write: the write-ahead file cut mid-frame, inside the commit frame
 * of the transaction commitsCut from its end (fewer when it holds fewer), as
 * a disk that acknowledged writes it had not made durable leaves it after a
 * crash. Undefined when there is no write-ahead file with a commit to tear.
 */
export function tearWal(dataDir: string, commitsCut: number): string | undefined {
  const walFile = `${logFileIn(dataDir)}-wal`;
  if (!fs.existsSync(walFile)) return undefined;
  const layout = readWalLayout(fs.readFileSync(walFile));
  if (layout === undefined || layout.commitEnds.length === 0) return undefined;
  const commitEnd = layout.commitEnds[Math.max(0, layout.commitEnds.length - 1 - commitsCut)]!;
  const cutAt = commitEnd - Math.floor(layout.frameBytes / 2);
  fs.truncateSync(walFile, cutAt);
  return `cut ${walFile} at byte ${cutAt} of ${layout.commitEnds.at(-1)}`;
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
