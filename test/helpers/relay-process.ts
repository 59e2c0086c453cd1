// `tally relay` as a child process, as an operator runs it: spawned with node
// directly (a SIGKILL reaches the relay itself), its stderr kept, its
// metrics port read from its "relay ready" line.
import { spawn, type ChildProcess } from 'node:child_process';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { cliNodeArgs } from './cli.ts';
import { waitFor } from './cluster.ts';

export interface RelayProcess {
  child: ChildProcess;
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** Set once the relay logged "relay ready". */
  metricsPort: number | undefined;
  exited: Promise<number | null>;
  /** Resolves when stderr has a line containing text (from offset on). */
  waitForLine(text: string, options?: { timeoutMs?: number; from?: number }): Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

export function spawnRelay(args: string[], env: NodeJS.ProcessEnv = {}): RelayProcess {
  const child = spawn(process.execPath, [...cliNodeArgs, 'relay', ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  const relay: RelayProcess = {
    child,
    stderr: () => stderr,
    metricsPort: undefined,
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
    async waitForLine(text, options = {}) {
      await waitFor(() => stderr.indexOf(text, options.from ?? 0) >= 0, {
        timeoutMs: options.timeoutMs ?? 20_000,
        what: `relay stderr line with "${text}" (stderr: ${stderr.slice(-600)})`,
      });
    },
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return relay.exited;
    },
  };
  child.stdout.on('data', () => {});
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    const ready = /"msg":"relay ready"[^\n]*"metricsPort":(\d+)|"metricsPort":(\d+)[^\n]*"msg":"relay ready"/.exec(stderr);
    if (ready !== null && relay.metricsPort === undefined) relay.metricsPort = Number(ready[1] ?? ready[2]);
  });
  return relay;
}
