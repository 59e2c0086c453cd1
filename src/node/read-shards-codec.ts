// The node's answer to ReadShards written straight to bytes: a page of cold
// counters asks one pair for ~50 shard totals, and proto-loader would turn
// each bigint total into a decimal string, then a Long, then a varint. The
// encoder lives with the other lean codecs (common/counter-codec-write.ts,
// the same varint writer); this wires it in. Only the response: the request
// is still decoded by proto-loader, and every reader of the bytes (the
// router, any older one) decodes them as before.
import assert from 'node:assert';
import { encodeReadShardsResponse } from '../common/counter-codec-write.ts';
import { encodeReadShardsAnswerFrame, type ReadShardsAnswerFrame } from '../common/shard-frames.ts';

export { encodeReadShardsResponse, type ReadShardsAnswer } from '../common/counter-codec-write.ts';

/**
 * A copy of tally.shard.v1.ShardNode's definition whose ReadShards answers
 * through encodeReadShardsResponse, and whose ReadShardsStream answers
 * carrying a response through encodeReadShardsAnswerFrame (errors through
 * the ordinary serializer).
 */
export function withLeanReadShardsResponse<Definition extends object>(service: Definition): Definition {
  const method = (service as Record<string, unknown>).ReadShards;
  assert(typeof method === 'object' && method !== null, 'ReadShards codec: the service has no method ReadShards');
  const stream = (service as Record<string, unknown>).ReadShardsStream as { responseSerialize: (value: unknown) => Buffer } | undefined;
  assert(typeof stream === 'object' && stream !== null, 'ReadShards codec: the service has no method ReadShardsStream');
  const serializeOrdinary = stream.responseSerialize;
  const serializeFrame = (frame: ReadShardsAnswerFrame): Buffer =>
    frame.response !== undefined ? encodeReadShardsAnswerFrame(frame.seq, frame.response) : serializeOrdinary(frame);
  return {
    ...service,
    ReadShards: { ...method, responseSerialize: encodeReadShardsResponse },
    ReadShardsStream: { ...stream, responseSerialize: serializeFrame },
  };
}
