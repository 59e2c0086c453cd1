// The harness's end of the client host: starts the agent in the client's
// namespace, sends it commands, and collects every operation it reports into
// the History. Cluster status comes through here too (the only way in).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { HostProcess, type Host } from '../hosts/index.ts';
import { History, operationFromJson, type IncrementOperation, type ReadOperation } from '../check/index.ts';
import type { AgentCommand, LoadOptions } from './protocol.ts';

const agentScript = path.join(path.dirname(fileURLToPath(import.meta.url)), 'agent.ts');

/** ClusterStatus as the agent relays it (int64 fields as decimal strings). */
export interface RelayedStatus {
  nodes: {
    address: string;
    role: string;
    pair: number;
    health: string;
    inSync: boolean;
    error: string;
    replicationLagEntries: string;
    epoch: number;
  }[];
  pairs: { pair: number; primary: string; follower: string; epoch: number; inSync: boolean }[];
  routers: string[];
  supervisor: string;
  router: string;
}

/** A SCOPE_GLOBAL read's result: the sum, and each region's part with its age. */
export interface GlobalRead {
  counter: string;
  total: bigint;
  exact: boolean;
  regions: { region: string; total: bigint; asOfUnixMs: number; stalenessMs: number; home: boolean }[];
}

type RelayedGlobalRead = Omit<GlobalRead, 'total' | 'regions'> & {
  total: string;
  regions: (Omit<GlobalRead['regions'][number], 'total'> & { total: string })[];
};

export class ClientHost {
  readonly process: HostProcess;
  /** Every operation the agent made, in the order reported. */
  history = new History();
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  constructor(host: Host, routerAddresses: () => string[], cwd: string) {
    this.process = new HostProcess({
      name: 'client',
      host,
      command: process.execPath,
      args: () => ['--import', 'tsx', agentScript, ...routerAddresses()],
      cwd,
      isReady: (line) => line === '{"ready":true}',
      onLine: (_name, line) => this.onLine(line),
    });
  }

  start(): Promise<void> {
    return this.process.start();
  }

  private onLine(line: string): void {
    if (!line.startsWith('{"op":') && !line.startsWith('{"reply":')) return;
    const message = JSON.parse(line) as { op?: Record<string, unknown>; reply?: number; value?: unknown; error?: string };
    if (message.op !== undefined) {
      this.history.add(operationFromJson(message.op));
      return;
    }
    const waiter = this.waiting.get(message.reply!);
    if (waiter === undefined) return;
    this.waiting.delete(message.reply!);
    if (message.error !== undefined) waiter.reject(new Error(message.error));
    else waiter.resolve(message.value);
  }

  private send<T>(command: AgentCommand): Promise<T> {
    if (!this.process.running) return Promise.reject(new Error('the client agent is not running'));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.process.writeLine(JSON.stringify({ ...command, id }));
    });
  }

  /** ClusterStatus through one router; rejects when that router does not answer within deadlineMs. */
  status(router: number, deadlineMs = 2_000): Promise<RelayedStatus> {
    return this.send({ cmd: 'status', router, deadlineMs });
  }

  /** One increment, recorded in the history. */
  async increment(
    router: number,
    counter: string,
    amount: bigint,
    options: { key?: string; deadlineMs?: number } = {},
  ): Promise<IncrementOperation> {
    return operationFromJson(
      await this.send({
        cmd: 'increment',
        router,
        counter,
        amount: amount.toString(),
        deadlineMs: options.deadlineMs ?? 3_000,
        ...(options.key === undefined ? {} : { key: options.key }),
      }),
    ) as IncrementOperation;
  }

  /** One exact read, recorded in the history; `final` marks the reads the final bounds apply to. */
  async read(router: number, counter: string, options: { final?: boolean; deadlineMs?: number } = {}): Promise<ReadOperation> {
    return operationFromJson(
      await this.send({ cmd: 'read', router, counter, deadlineMs: options.deadlineMs ?? 3_000, final: options.final ?? false }),
    ) as ReadOperation;
  }

  /** One SCOPE_GLOBAL read (not recorded in the history); rejects with the call's error. */
  async globalRead(router: number, counter: string, options: { deadlineMs?: number } = {}): Promise<GlobalRead> {
    const relayed = await this.send<RelayedGlobalRead>({ cmd: 'globalRead', router, counter, deadlineMs: options.deadlineMs ?? 3_000 });
    return {
      ...relayed,
      total: BigInt(relayed.total),
      regions: relayed.regions.map((part) => ({ ...part, total: BigInt(part.total) })),
    };
  }

  startLoad(options: LoadOptions): Promise<void> {
    return this.send({ cmd: 'startLoad', options });
  }

  /** Stops the writers; resolves once every call in flight has its outcome in the history. */
  stopLoad(): Promise<void> {
    return this.send({ cmd: 'stopLoad' });
  }

  /** A new, empty history (the next schedule's). */
  resetHistory(): History {
    const previous = this.history;
    this.history = new History();
    return previous;
  }

  async stop(): Promise<void> {
    for (const waiter of this.waiting.values()) waiter.reject(new Error('the client agent stopped'));
    this.waiting.clear();
    await this.process.stop(2_000);
  }
}
