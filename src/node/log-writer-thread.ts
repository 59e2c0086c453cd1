// Moves the commit's SQLite write and fsync off the node's event loop (issue
// 16, item 4; `--log-writer thread`): a worker thread with its own connection
// runs each group commit's INSERT transaction. The caller learns the commit is
// durable only from the worker's answer, so nothing is acknowledged or
// replicated before its fsync, as inline. Reads (catch-up, checkpoint, keys)
// stay on the node's connection: WAL lets them run beside the writer.
import { Worker } from 'node:worker_threads';
import { ErrorCode, TallyError } from '../common/index.ts';
import type { LogEntry } from './log-entry.ts';
import type { WriteRequest, WriterMessage } from './log-writer-worker.ts';

export type LogWriterMode = 'inline' | 'thread';

interface Waiting {
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class LogWriterThread {
  private nextId = 1;
  private readonly waiting = new Map<number, Waiting>();
  private failure: unknown;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (message: WriterMessage) => {
      if ('ready' in message) return;
      const waiting = this.waiting.get(message.id);
      if (waiting === undefined) return;
      this.waiting.delete(message.id);
      if (message.error === undefined) waiting.resolve();
      // Rebuilt as better-sqlite3 throws it, so storageError maps its code as inline.
      else waiting.reject(Object.assign(new Error(message.error.message), message.error));
    });
    const fail = (error: unknown): void => {
      // A commit sent to a thread that died may or may not be on disk: outcome unknown.
      this.failure = new TallyError(ErrorCode.unavailable, `the log writer thread stopped: ${String(error)}`);
      for (const waiting of this.waiting.values()) waiting.reject(this.failure);
      this.waiting.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(`exit ${code}`));
  }

  /** Starts the thread on the log file (already open, in WAL mode); resolves once its connection is open. */
  static async start(file: string): Promise<LogWriterThread> {
    // The node runs under tsx; a worker does not inherit its loader, so it registers it before importing the body.
    const body = new URL('./log-writer-worker.ts', import.meta.url).href;
    const worker = new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(body)}); });`, {
      eval: true,
      workerData: { file },
    });
    await new Promise<void>((resolve, reject) => {
      const onMessage = (message: WriterMessage): void => {
        if (!('ready' in message)) return;
        worker.off('message', onMessage).off('error', reject);
        resolve();
      };
      worker.on('message', onMessage).once('error', reject);
    });
    return new LogWriterThread(worker);
  }

  /** Writes entries at firstLsn.. under epoch in one transaction; resolves once it is fsync'd. */
  write(entries: readonly LogEntry[], firstLsn: bigint, epoch: bigint, atMs: number): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, firstLsn, epoch, atMs, entries: entries as LogEntry[] } satisfies WriteRequest);
    });
  }

  async close(): Promise<void> {
    this.worker.removeAllListeners('exit');
    await this.worker.terminate();
  }
}
