// Temporary data directories for unit tests that use real SQLite files.
// Each test gets its own directory under os.tmpdir(); nothing outlives the test.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function makeTempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `tally-unit-${prefix}-`));
}

export function removeTempDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}
