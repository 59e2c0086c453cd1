// Runs the tally CLI as users do, but from the TypeScript source (through tsx,
// like every process the tests start), so a stale dist/ can never decide a
// test: a node process with its stdout, stderr and exit code. The built CLI
// (bin/tally.mjs -> dist/) has its own test, on a fresh build.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../../src/cluster/managed-process.ts';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** node arguments that run the CLI from source; --no-deprecation as bin/tally.mjs sets it. */
export const cliNodeArgs = ['--import', 'tsx', '--no-deprecation', path.join(repoRoot, 'src/cli/cli.ts')];

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
