// Temporary directories for tests: SQLite files, a cluster's data, certificates.
// Each is its own directory under os.tmpdir(); the test that makes one removes it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A new empty directory named tally-<prefix>-XXXXXX. */
export function makeTempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `tally-${prefix}-`));
}

export function removeTempDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}
