// One Tally process started with `node` directly (never via npm or a shell,
// so a signal reaches the process we mean), watched until it logs "ready".
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import readline from 'node:readline';

const modulePath = fileURLToPath(import.meta.url);
export const repoRoot = path.resolve(path.dirname(modulePath), '../..');
// Children run as this module does: compiled from dist/ (npm start, the
// Docker image), or from the TypeScript source under tsx (development). `npm
// test` builds first and sets TALLY_CHILDREN_FROM_DIST=1: the suite starts
// about a thousand processes, and loading each through tsx was a quarter of
// its CPU on two cores; a dist/ built by the same command is never stale.
export const childrenFromDist = process.env.TALLY_CHILDREN_FROM_DIST === '1';
const fromSource = modulePath.endsWith('.ts') && !childrenFromDist;
export const nodeMainPath = path.join(repoRoot, fromSource ? 'src/node/main.ts' : 'dist/node/main.js');
export const routerMainPath = path.join(repoRoot, fromSource ? 'src/router/main.ts' : 'dist/router/main.js');

export interface ManagedProcessOptions {
  name: string;
  script: string;
  /** Read at every start(): a getter can give a restart other arguments (LocalCluster pins ports this way). */
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** Receives every log line the process writes (stdout and stderr). */
  onLine?: (name: string, line: string) => void;
}

/** What a process bound, as its "ready" line reports it: port 0 asks the kernel for a free port. */
export interface ReportedPorts {
  /** The gRPC port. */
  port: number;
  /** The /metrics port; undefined when the endpoint is off. */
  metricsPort: number | undefined;
}

function isPort(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) > 0 && (value as number) <= 65535;
}

/** The ports of a "ready" log line (JSON from pino); throws when it reports no gRPC port. */
export function reportedPortsOf(line: string): ReportedPorts {
  const fields = JSON.parse(line) as { port?: unknown; metricsPort?: unknown };
  if (!isPort(fields.port) || (fields.metricsPort !== undefined && !isPort(fields.metricsPort))) {
    throw new Error(`the ready line does not report the ports bound: ${line}`);
  }
  return { port: fields.port, metricsPort: fields.metricsPort };
}

/**
 * Resolves once a line the child writes (stdout or stderr) passes isReady;
 * rejects if isReady throws, if the child exits first, or after
 * readyTimeoutMs (onTimeout then runs, to kill it say). Every line goes to
 * onLine and into lastLines (the newest keptLines of them), which name the
 * failure.
 */
export function untilReady(
  child: ChildProcess,
  options: {
    name: string;
    readyTimeoutMs: number;
    isReady: (line: string) => boolean;
    onLine?: (line: string) => void;
    lastLines?: string[];
    keptLines?: number;
    onTimeout?: () => void;
  },
): Promise<void> {
  const lastLines = options.lastLines ?? [];
  const keptLines = options.keptLines ?? 5;
  const recent = (): string => lastLines.slice(-5).join(' | ');
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (error?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve();
    };
    const timer = setTimeout(() => {
      settle(new Error(`${options.name} was not ready within ${options.readyTimeoutMs} ms: ${recent()}`));
      options.onTimeout?.();
    }, options.readyTimeoutMs);
    for (const stream of [child.stdout!, child.stderr!]) {
      readline.createInterface({ input: stream }).on('line', (line) => {
        options.onLine?.(line);
        lastLines.push(line);
        if (lastLines.length > keptLines) lastLines.shift();
        try {
          if (options.isReady(line)) settle();
        } catch (error) {
          settle(error as Error);
        }
      });
    }
    child.once('exit', (code, signal) => settle(new Error(`${options.name} exited (${signal ?? code}) before it was ready: ${recent()}`)));
  });
}

export class ManagedProcess {
  private child: ChildProcess | undefined;
  private exitPromise: Promise<number | null> | undefined;
  private reportedPorts: ReportedPorts | undefined;

  constructor(readonly options: ManagedProcessOptions) {}

  get name(): string {
    return this.options.name;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * The ports of the latest "ready" line; undefined before the first. They
   * outlive the process: whoever started it on port 0 restarts it on these.
   */
  get ports(): ReportedPorts | undefined {
    return this.reportedPorts;
  }

  /** Starts the process; resolves once it logs "ready" with its ports, rejects if it exits first or times out. */
  start(readyTimeoutMs = 20_000): Promise<void> {
    if (this.running) throw new Error(`${this.name} is already running`);
    // A TypeScript script (.ts, .mts) runs through tsx; compiled JavaScript as it is.
    const loaderArgs = /\.[cm]?ts$/.test(this.options.script) ? ['--import', 'tsx'] : [];
    const child = spawn(process.execPath, [...loaderArgs, this.options.script, ...this.options.args], {
      cwd: repoRoot,
      env: { ...process.env, ...this.options.env, TALLY_STOP_WITH_PARENT: '1' },
      // Own process group: a Ctrl-C in the terminal reaches only the launcher,
      // which stops the router before the nodes. stdin stays open as a
      // lifeline: when the launcher dies, the child sees it close and stops.
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    this.exitPromise = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    return untilReady(child, {
      name: this.name,
      readyTimeoutMs,
      isReady: (line) => {
        if (!line.includes('"msg":"ready"')) return false;
        this.reportedPorts = reportedPortsOf(line);
        return true;
      },
      onLine: (line) => this.options.onLine?.(this.name, line),
    });
  }

  /** Sends a signal and waits for the exit. SIGKILL gives the process no chance to clean up. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 10_000): Promise<void> {
    if (!this.running) return;
    this.child!.kill(signal);
    const exited = await Promise.race([
      this.exitPromise!.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref()),
    ]);
    if (!exited) {
      this.child!.kill('SIGKILL');
      await this.exitPromise;
    }
  }

  /** Resolves when the process exits (at once if it is not running). */
  exited(): Promise<number | null> {
    return this.exitPromise ?? Promise.resolve(null);
  }

  /** Pause and resume (SIGSTOP/SIGCONT), for tests of hung processes. */
  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }
}
