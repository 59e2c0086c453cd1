// ReadShards on the node, read and answered without proto-loader: a page of
// cold counters asks one pair for ~50 shard totals, and proto-loader would
// turn each uint64 shard id into a Long and then a decimal string (Long
// division: the node's largest cost per page), and each bigint total into a
// string, a Long and a varint. The messages are read and written in
// read-shards-messages.ts, on the lean codecs' reader and writer (held equal
// to protobufjs); this wires them in. Same bytes on the wire: any router reads
// the answers and writes the requests.
import assert from 'node:assert';
import { decodeReadShardsFrame, decodeReadShardsRequest, encodeReadShardsResponse } from './read-shards-messages.ts';
import { encodeReadShardsAnswerFrame, type ReadShardsAnswerFrame } from './shard-frames.ts';

export {
  decodeReadShardsFrame,
  decodeReadShardsRequest,
  encodeReadShardsResponse,
  type LeanReadShardsFrame,
  type LeanReadShardsRequest,
  type ReadShardsAnswer,
} from './read-shards-messages.ts';

/**
 * A copy of tally.shard.v1.ShardNode's definition whose ReadShards reads
 * through decodeReadShardsRequest and answers through
 * encodeReadShardsResponse, and whose ReadShardsStream reads frames through
 * decodeReadShardsFrame and answers carrying a response through
 * encodeReadShardsAnswerFrame (errors through the ordinary serializer).
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
    ReadShards: { ...method, requestDeserialize: decodeReadShardsRequest, responseSerialize: encodeReadShardsResponse },
    ReadShardsStream: { ...stream, requestDeserialize: decodeReadShardsFrame, responseSerialize: serializeFrame },
  };
}
