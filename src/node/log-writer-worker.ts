// The body of the log's writer thread (see log-writer-thread.ts): its own
// connection to the node's log, which runs each commit's INSERT transaction
// and its fsync while the node's event loop goes on decoding, replicating
// and answering. It writes only the rows it is sent, at the lsns it is told.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { insertRow, prepareInserts } from './log-insert.ts';
import type { LogEntry } from './log-entry.ts';

export interface WriteRequest {
  id: number;
  firstLsn: bigint;
  epoch: bigint;
  atMs: number;
  entries: LogEntry[];
}

export type WriterMessage =
  { ready: true } | { id: number; error?: undefined } | { id: number; error: { name: string; message: string; code?: string } };

const port = parentPort!;
const { file } = workerData as { file: string };
const db = new Database(file, { fileMustExist: true });
// Per connection: every commit of this one is fsync'd too (the file is already in WAL mode).
db.pragma('synchronous = FULL');
const inserts = prepareInserts(db);

/** Buffers arrive as plain Uint8Arrays (structured clone); SQLite binds Buffers. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

// IMMEDIATE: takes the write lock up front, waiting (busy timeout) while the
// node's own connection folds a checkpoint or writes meta.
const write = db.transaction((request: WriteRequest) => {
  let lsn = request.firstLsn;
  for (const entry of request.entries) {
    entry.idempotencyKey = asBuffer(entry.idempotencyKey);
    if (entry.payload !== undefined) entry.payload = asBuffer(entry.payload);
    insertRow(inserts, lsn, request.epoch, entry, request.atMs);
    lsn++;
  }
});

port.on('message', (request: WriteRequest) => {
  try {
    write.immediate(request);
    port.postMessage({ id: request.id } satisfies WriterMessage);
  } catch (thrown) {
    const error = thrown as Error & { code?: unknown };
    port.postMessage({
      id: request.id,
      error: { name: error.name, message: error.message, code: typeof error.code === 'string' ? error.code : undefined },
    } satisfies WriterMessage);
  }
});
port.postMessage({ ready: true } satisfies WriterMessage);
