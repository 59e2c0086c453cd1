// The log's file: where it lives in a node's data directory, and opening it
// with the pragmas we mean and the schema upgraded. It reads and writes no
// entry; a file that cannot be opened or upgraded is a ShardLogError.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { preparePrivateDir, preparePrivateFile } from '../../common/index.ts';
import { registerChecksumFunctions } from './checksums.ts';
import { createOrUpgradeSchema } from './log-schema.ts';
import { ShardLogError } from './records/log-entry.ts';

/** The log's file in a node's data directory. */
export function logFileOf(dataDir: string): string {
  return path.join(dataDir, 'node.sqlite');
}

/** Opens (or creates) the log's file in dataDir, private to this user, its schema current. */
export function openLogDatabase(dataDir: string): { db: Database.Database; file: string } {
  preparePrivateDir(dataDir);
  const file = logFileOf(dataDir);
  preparePrivateFile(file);
  let db: Database.Database | undefined;
  try {
    db = new Database(file);
    // WAL + FULL: every commit is fsync'd before better-sqlite3 returns.
    // better-sqlite3 leaves WAL at synchronous=NORMAL, which can lose the
    // last commits on power loss; we set what we mean.
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    registerChecksumFunctions(db);
    createOrUpgradeSchema(db, file);
    return { db, file };
  } catch (error) {
    db?.close();
    if (error instanceof ShardLogError) throw error;
    throw new ShardLogError(`cannot open log ${file}: ${(error as Error).message}`);
  }
}

/**
 * Bytes in the write-ahead file beside the log. It resets only when no
 * reader holds an older view: a long snapshot install lets it grow.
 */
export function walSizeBytesOf(file: string): number {
  try {
    return fs.statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
}
