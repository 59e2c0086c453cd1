// Data directories and database files readable by their owner only: totals,
// keys and the directory are nobody else's business on a shared machine.
// SQLite gives its -wal and -shm files the database file's mode.
import fs from 'node:fs';

/** Creates dir (and parents) if missing, and makes it 0700 when this process owns it. */
export function preparePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodIfOwned(dir, 0o700);
}

/** Creates file empty if missing (SQLite takes an empty file as a new database), and makes it 0600. */
export function preparePrivateFile(file: string): void {
  fs.closeSync(fs.openSync(file, 'a', 0o600));
  chmodIfOwned(file, 0o600);
}

function chmodIfOwned(target: string, mode: number): void {
  try {
    fs.chmodSync(target, mode);
  } catch (error) {
    // A directory an operator made and handed us (owned by root, writable by our group) keeps its mode.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error;
  }
}
