// One process on one host: `ip netns exec <namespace> <program>`, which execs
// the program in place, so the pid we hold is the program's own and SIGKILL,
// SIGSTOP and SIGCONT reach it, not a wrapper. Watched until a line says it is
// ready; keeps its last lines for an error message.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { untilReady } from '../../../../src/cluster/managed-process.ts';
import type { Host } from './network.ts';

export interface HostProcessOptions {
  /** Name in logs and fault descriptions: n0a, r1, e2. */
  name: string;
  host: Host;
  command: string;
  /** Read at every start: a restart may pass other arguments. */
  args: () => string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Whether a log line says the process is ready. */
  isReady: (line: string) => boolean;
  onLine?: (name: string, line: string) => void;
}

export class HostProcess {
  private child: ChildProcess | undefined;
  private exitPromise: Promise<void> = Promise.resolve();
  private paused = false;
  readonly lastLines: string[] = [];

  constructor(readonly options: HostProcessOptions) {}

  get name(): string {
    return this.options.name;
  }

  get host(): Host {
    return this.options.host;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  get isPaused(): boolean {
    return this.paused && this.running;
  }

  /** Starts it and resolves once it logs a ready line; rejects if it exits first or times out. */
  start(readyTimeoutMs = 30_000): Promise<void> {
    if (this.running) throw new Error(`${this.name} is already running`);
    this.paused = false;
    const child = spawn('ip', ['netns', 'exec', this.host.namespace, this.options.command, ...this.options.args()], {
      cwd: this.options.cwd,
      env: { ...process.env, ...this.options.env },
      // stdin open: Tally processes started with TALLY_STOP_WITH_PARENT stop when we die.
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    this.exitPromise = new Promise((resolve) => child.once('exit', () => resolve()));
    return untilReady(child, {
      name: this.name,
      readyTimeoutMs,
      isReady: this.options.isReady,
      onLine: (line) => this.options.onLine?.(this.name, line),
      lastLines: this.lastLines,
      keptLines: 20,
      onTimeout: () => child.kill('SIGKILL'),
    });
  }

  /** One line to the process's stdin (the client agent's commands). */
  writeLine(line: string): void {
    if (!this.running) throw new Error(`${this.name} is not running`);
    this.child!.stdin!.write(`${line}\n`);
  }

  /** The program's own pid (ip exec'd it): its /proc comm is the program, not "ip". */
  commandName(): string | undefined {
    if (this.pid === undefined) return undefined;
    try {
      return fs.readFileSync(`/proc/${this.pid}/comm`, 'utf8').trim();
    } catch {
      return undefined;
    }
  }

  /** SIGKILL (a crash) and wait for the exit. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.child!.kill('SIGKILL');
    await this.exitPromise;
    this.paused = false;
  }

  /** SIGTERM, SIGKILL after timeoutMs; a paused process is resumed first so it can stop. */
  async stop(timeoutMs = 5_000): Promise<void> {
    if (!this.running) return;
    if (this.paused) this.resume();
    this.child!.kill('SIGTERM');
    const exited = await Promise.race([
      this.exitPromise.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref()),
    ]);
    if (!exited) await this.kill();
  }

  /** SIGSTOP: the process freezes, its sockets stay open. */
  pause(): void {
    if (!this.running) return;
    this.child!.kill('SIGSTOP');
    this.paused = true;
  }

  /** SIGCONT. */
  resume(): void {
    if (!this.running) return;
    this.child!.kill('SIGCONT');
    this.paused = false;
  }

  exited(): Promise<void> {
    return this.exitPromise;
  }
}
