// The client's batching and its two long-lived streams: the increment
// coalescer (many callers' items in one call), and the IncrementStream and
// ReadStream senders, each a StreamSender (stream-sender.ts: sequence
// numbers, units in flight, stream replacement) of its own kind. What
// travels is counter.v1; which router a stream goes to is the connection's
// choice.
export {
  IncrementCoalescer,
  type CoalescedItem,
  type CoalescedResult,
  type CoalescerTransport,
  type RetryPolicy,
} from './increment-coalescer.ts';
export { IncrementStreamSender, StreamUnsupported, type IncrementStreamCall, type OpenIncrementStream } from './increment-stream.ts';
export { ReadStreamSender, ReadStreamUnsupported, type OpenReadStream, type ReadPageRequest, type ReadStreamCall } from './read-stream.ts';
export { StreamSender, type ClientStreamKind, type StreamAnswer } from './stream-sender.ts';
