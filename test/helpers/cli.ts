// Runs the tally CLI as users do, as every process the tests start: from
// dist/ under `npm test` (which builds it first, TALLY_CHILDREN_FROM_DIST),
// else from the TypeScript source through tsx, so a stale dist/ can never
// decide a test: a node process with its stdout, stderr and exit code.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { childrenFromDist, repoRoot } from '../../src/cluster/managed-process.ts';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** node arguments that run the CLI from source; --no-deprecation as bin/tally.mjs sets it. */
export const cliNodeArgs = childrenFromDist
  ? ['--no-deprecation', path.join(repoRoot, 'dist/cli/cli.js')]
  : ['--import', 'tsx', '--no-deprecation', path.join(repoRoot, 'src/cli/cli.ts')];

export function tally(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...cliNodeArgs, ...args], { cwd: repoRoot, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
