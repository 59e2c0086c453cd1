// CounterService: its wiring and increments (counter-service.ts), its reads
// (read-handlers.ts), the other kinds and Clear (kind-handlers.ts), and the
// two streams, IncrementStream and ReadStream, each a StreamSession
// (stream-session.ts) over the unary body it repeats. Only api/index.ts re-exports from here.
export { createCounterService, IncrementHandlers, type CounterServiceDeps } from './counter-service.ts';
export { createReadHandlers, validateConsistency, validateScope, type ReadDeps } from './read-handlers.ts';
export { createKindHandlers, type KindDeps } from './kind-handlers.ts';
export { createIncrementStreamHandler, type ApplyBatch } from './increment-stream.ts';
export { createReadStreamHandler, type ReadPage } from './read-stream.ts';
export { StreamSession, type RouterCount, type StreamKind } from './stream-session.ts';
