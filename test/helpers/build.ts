// A fresh build in a temp directory, for the tests of the compiled JavaScript:
// the sources, configs, protos and bin/ copied, node_modules linked without
// tsx, then `npm run build`. Neither a stale dist/ nor tsx can decide them.
// Under `npm test` (TALLY_CHILDREN_FROM_DIST) the repository's dist/ was built
// from these sources by the same command moments before: it is copied instead
// of compiling the tree a second time (~20 s of a core on these machines).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { childrenFromDist, repoRoot } from '../../src/cluster/managed-process.ts';

export interface FreshBuild {
  /** The temp directory: dist/, bin/, proto/ and node_modules/ as in a clone after `npm run build`. */
  root: string;
  remove(): void;
}

export async function freshBuild(): Promise<FreshBuild> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-build-'));
  try {
    for (const entry of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'src', 'proto', 'bin']) {
      fs.cpSync(path.join(repoRoot, entry), path.join(root, entry), { recursive: true });
    }
    // Every installed package but tsx: the compiled code must run without it.
    fs.mkdirSync(path.join(root, 'node_modules'));
    for (const name of fs.readdirSync(path.join(repoRoot, 'node_modules'))) {
      if (name !== 'tsx') fs.symlinkSync(path.join(repoRoot, 'node_modules', name), path.join(root, 'node_modules', name));
    }
    if (childrenFromDist) fs.cpSync(path.join(repoRoot, 'dist'), path.join(root, 'dist'), { recursive: true });
    else await promisify(execFile)('npm', ['run', 'build'], { cwd: root });
  } catch (error) {
    fs.rmSync(root, { recursive: true, force: true });
    throw error;
  }
  return { root, remove: () => fs.rmSync(root, { recursive: true, force: true }) };
}
