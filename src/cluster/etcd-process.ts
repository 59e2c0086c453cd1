// A local single-member etcd (Debian's etcd-server, from PATH) for several
// routers on one machine: the launcher's `--routers N` and the tests. Its
// data lives in a directory of ours, so a restart keeps the directory.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { etcdTxnOpsMax } from '../common/index.ts';
import { monotonicNowMs } from '../wire/index.ts';

export interface EtcdProcessOptions {
  dataDir: string;
  host?: string;
  /** 0: a port the kernel picks (chosen once, kept across restarts). */
  clientPort?: number;
  peerPort?: number;
  /** Receives every line etcd logs. */
  onLine?: (line: string) => void;
  /**
   * The launcher's etcd: in its own process group, so a Ctrl-C in the terminal
   * reaches only the launcher (which stops etcd last), and stopped by a small
   * shell watching the launcher's pipe when the launcher dies (SIGKILL), as
   * the Node children do through their stdin.
   */
  stopWithParent?: boolean;
  /**
   * Serve clients over TLS (https://) and require a client certificate
   * signed by caFile (--client-cert-auth). The peer URL stays plaintext on
   * loopback: one member.
   */
  tls?: { certFile: string; keyFile: string; caFile: string; clientCertFile: string; clientKeyFile: string };
}

/** The one-line error when etcd is not installed: names the package. */
export const etcdMissingMessage =
  'etcd is not on PATH: install the Debian package etcd-server (apt-get install etcd-server) to run several routers';

export function etcdInstalled(): boolean {
  return spawnSync('etcd', ['--version'], { stdio: 'ignore' }).status === 0;
}

async function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

class EtcdExitedError extends Error {}

export class EtcdProcess {
  private everReady = false;
  /** etcd's last log line: why it exited, for the error. */
  private lastLine = '';
  /** For the launcher's lines about it. */
  readonly name = 'etcd';
  private child: ChildProcess | undefined;
  private exitPromise: Promise<number | null> | undefined;
  private clientPort = 0;
  private peerPort = 0;
  private readonly host: string;

  constructor(private readonly options: EtcdProcessOptions) {
    this.host = options.host ?? '127.0.0.1';
  }

  /** The client URL routers are given (--etcd). */
  get endpoint(): string {
    return `${this.options.tls === undefined ? 'http' : 'https'}://${this.host}:${this.clientPort}`;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Starts etcd and resolves once it answers its health endpoint. Ports we
   * picked ourselves (0 asked) are free when picked, but another process may
   * bind one before etcd does: a first start that exits early picks new
   * ones and tries again (a restart keeps its ports: clients know them).
   */
  async start(readyTimeoutMs = 20_000): Promise<void> {
    const pickedPorts = !this.everReady && !this.options.clientPort && !this.options.peerPort;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.startOnce(readyTimeoutMs);
        this.everReady = true;
        return;
      } catch (error) {
        if (!pickedPorts || attempt >= 3 || !(error instanceof EtcdExitedError)) throw error;
        this.clientPort = 0;
        this.peerPort = 0;
      }
    }
  }

  private async startOnce(readyTimeoutMs: number): Promise<void> {
    if (this.running) throw new Error('etcd is already running');
    if (!etcdInstalled()) throw new Error(etcdMissingMessage);
    if (this.clientPort === 0) this.clientPort = this.options.clientPort || (await freePort(this.host));
    if (this.peerPort === 0) this.peerPort = this.options.peerPort || (await freePort(this.host));
    fs.mkdirSync(this.options.dataDir, { recursive: true, mode: 0o700 });
    const peerUrl = `http://${this.host}:${this.peerPort}`;
    const child = spawn(
      'etcd',
      [
        '--name',
        'tally',
        '--data-dir',
        this.options.dataDir,
        '--listen-client-urls',
        this.endpoint,
        '--advertise-client-urls',
        this.endpoint,
        '--listen-peer-urls',
        peerUrl,
        '--initial-advertise-peer-urls',
        peerUrl,
        '--initial-cluster',
        `tally=${peerUrl}`,
        '--initial-cluster-state',
        'new',
        // The directory's transactions: a call's new counters, a deleted counter's drops (limits.ts).
        '--max-txn-ops',
        String(etcdTxnOpsMax),
        // Every router writes its presence key a few times per lease TTL (its
        // proof that its watch is current): history is compacted, an hour kept.
        '--auto-compaction-mode',
        'periodic',
        '--auto-compaction-retention',
        '1h',
        ...(this.options.tls === undefined
          ? []
          : [
              '--cert-file',
              this.options.tls.certFile,
              '--key-file',
              this.options.tls.keyFile,
              '--trusted-ca-file',
              this.options.tls.caFile,
              '--client-cert-auth',
            ]),
        '--log-level',
        'warn',
        '--logger',
        'zap',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], detached: this.options.stopWithParent === true },
    );
    this.child = child;
    if (this.options.stopWithParent === true && child.pid !== undefined) {
      // EOF on its stdin (our end closes when we die) ends the read: then it stops etcd.
      const lifeline = spawn('sh', ['-c', 'read -r _ignored; kill -TERM "$1" 2>/dev/null', 'etcd-lifeline', String(child.pid)], {
        stdio: ['pipe', 'ignore', 'ignore'],
        detached: true,
      });
      child.once('exit', () => lifeline.kill('SIGKILL'));
    }
    this.exitPromise = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    for (const stream of [child.stdout!, child.stderr!]) {
      let pending = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        pending += chunk;
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const line of lines) {
          if (line.length === 0) continue;
          this.lastLine = line;
          this.options.onLine?.(line);
        }
      });
    }
    const deadline = monotonicNowMs() + readyTimeoutMs;
    while (monotonicNowMs() < deadline) {
      if (!this.running)
        throw new EtcdExitedError(`etcd exited before it was ready (code ${child.exitCode}, signal ${child.signalCode}): ${this.lastLine}`);
      try {
        if (await this.healthy()) return;
      } catch {
        // Not listening yet.
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await this.kill();
    throw new Error(`etcd was not healthy within ${readyTimeoutMs} ms`);
  }

  /** One GET /health (over TLS with the client certificate when etcd requires one). */
  private async healthy(): Promise<boolean> {
    const tls = this.options.tls;
    if (tls === undefined) {
      const response = await fetch(`${this.endpoint}/health`, { signal: AbortSignal.timeout(1_000) });
      return response.ok && ((await response.json()) as { health?: string }).health === 'true';
    }
    const body = await new Promise<string>((resolve, reject) => {
      const request = https.get(
        `${this.endpoint}/health`,
        {
          ca: fs.readFileSync(tls.caFile),
          cert: fs.readFileSync(tls.clientCertFile),
          key: fs.readFileSync(tls.clientKeyFile),
          timeout: 1_000,
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve(text));
        },
      );
      request.on('timeout', () => request.destroy(new Error('timeout')));
      request.on('error', reject);
    });
    return (JSON.parse(body) as { health?: string }).health === 'true';
  }

  /** Sends a signal and waits for the exit (SIGKILL: a crash; SIGTERM: a clean stop). */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.running) return;
    this.child!.kill(signal);
    await this.exitPromise;
  }

  /** Resolves when etcd exits, with its exit code (null: killed by a signal); at once if it is not running. */
  exited(): Promise<number | null> {
    return this.exitPromise ?? Promise.resolve(null);
  }

  async stop(): Promise<void> {
    await this.kill('SIGTERM');
  }
}
