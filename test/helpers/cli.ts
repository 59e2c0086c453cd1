// Runs the tally CLI as users do: a node process on bin/tally.mjs, with its
// stdout, stderr and exit code.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../../src/cluster/managed-process.ts';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function tally(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin/tally.mjs'), ...args], { cwd: repoRoot, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
