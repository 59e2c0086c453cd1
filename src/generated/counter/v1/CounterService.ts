// Original file: proto/counter.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AddDistinctRequest as _counter_v1_AddDistinctRequest, AddDistinctRequest__Output as _counter_v1_AddDistinctRequest__Output } from '../../counter/v1/AddDistinctRequest.ts';
import type { AddDistinctResponse as _counter_v1_AddDistinctResponse, AddDistinctResponse__Output as _counter_v1_AddDistinctResponse__Output } from '../../counter/v1/AddDistinctResponse.ts';
import type { ClearRequest as _counter_v1_ClearRequest, ClearRequest__Output as _counter_v1_ClearRequest__Output } from '../../counter/v1/ClearRequest.ts';
import type { ClearResponse as _counter_v1_ClearResponse, ClearResponse__Output as _counter_v1_ClearResponse__Output } from '../../counter/v1/ClearResponse.ts';
import type { CountDistinctRequest as _counter_v1_CountDistinctRequest, CountDistinctRequest__Output as _counter_v1_CountDistinctRequest__Output } from '../../counter/v1/CountDistinctRequest.ts';
import type { CountDistinctResponse as _counter_v1_CountDistinctResponse, CountDistinctResponse__Output as _counter_v1_CountDistinctResponse__Output } from '../../counter/v1/CountDistinctResponse.ts';
import type { IncrementBatchRequest as _counter_v1_IncrementBatchRequest, IncrementBatchRequest__Output as _counter_v1_IncrementBatchRequest__Output } from '../../counter/v1/IncrementBatchRequest.ts';
import type { IncrementBatchResponse as _counter_v1_IncrementBatchResponse, IncrementBatchResponse__Output as _counter_v1_IncrementBatchResponse__Output } from '../../counter/v1/IncrementBatchResponse.ts';
import type { IncrementRequest as _counter_v1_IncrementRequest, IncrementRequest__Output as _counter_v1_IncrementRequest__Output } from '../../counter/v1/IncrementRequest.ts';
import type { IncrementResponse as _counter_v1_IncrementResponse, IncrementResponse__Output as _counter_v1_IncrementResponse__Output } from '../../counter/v1/IncrementResponse.ts';
import type { IncrementStreamRequest as _counter_v1_IncrementStreamRequest, IncrementStreamRequest__Output as _counter_v1_IncrementStreamRequest__Output } from '../../counter/v1/IncrementStreamRequest.ts';
import type { IncrementStreamResponse as _counter_v1_IncrementStreamResponse, IncrementStreamResponse__Output as _counter_v1_IncrementStreamResponse__Output } from '../../counter/v1/IncrementStreamResponse.ts';
import type { IsMemberRequest as _counter_v1_IsMemberRequest, IsMemberRequest__Output as _counter_v1_IsMemberRequest__Output } from '../../counter/v1/IsMemberRequest.ts';
import type { IsMemberResponse as _counter_v1_IsMemberResponse, IsMemberResponse__Output as _counter_v1_IsMemberResponse__Output } from '../../counter/v1/IsMemberResponse.ts';
import type { ReadManyRequest as _counter_v1_ReadManyRequest, ReadManyRequest__Output as _counter_v1_ReadManyRequest__Output } from '../../counter/v1/ReadManyRequest.ts';
import type { ReadManyResponse as _counter_v1_ReadManyResponse, ReadManyResponse__Output as _counter_v1_ReadManyResponse__Output } from '../../counter/v1/ReadManyResponse.ts';
import type { ReadRequest as _counter_v1_ReadRequest, ReadRequest__Output as _counter_v1_ReadRequest__Output } from '../../counter/v1/ReadRequest.ts';
import type { ReadResponse as _counter_v1_ReadResponse, ReadResponse__Output as _counter_v1_ReadResponse__Output } from '../../counter/v1/ReadResponse.ts';
import type { ReadStreamRequest as _counter_v1_ReadStreamRequest, ReadStreamRequest__Output as _counter_v1_ReadStreamRequest__Output } from '../../counter/v1/ReadStreamRequest.ts';
import type { ReadStreamResponse as _counter_v1_ReadStreamResponse, ReadStreamResponse__Output as _counter_v1_ReadStreamResponse__Output } from '../../counter/v1/ReadStreamResponse.ts';
import type { ReadWindowRequest as _counter_v1_ReadWindowRequest, ReadWindowRequest__Output as _counter_v1_ReadWindowRequest__Output } from '../../counter/v1/ReadWindowRequest.ts';
import type { ReadWindowResponse as _counter_v1_ReadWindowResponse, ReadWindowResponse__Output as _counter_v1_ReadWindowResponse__Output } from '../../counter/v1/ReadWindowResponse.ts';
import type { SetMemberRequest as _counter_v1_SetMemberRequest, SetMemberRequest__Output as _counter_v1_SetMemberRequest__Output } from '../../counter/v1/SetMemberRequest.ts';
import type { SetMemberResponse as _counter_v1_SetMemberResponse, SetMemberResponse__Output as _counter_v1_SetMemberResponse__Output } from '../../counter/v1/SetMemberResponse.ts';

export interface CounterServiceClient extends grpc.Client {
  /**
   * Distinct counts (HyperLogLog, 2^14 registers, ~0.81% standard error).
   * Adds members to a distinct counter, created on first use. Idempotent:
   * adding a member again changes nothing.
   */
  AddDistinct(argument: _counter_v1_AddDistinctRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_AddDistinctResponse__Output>): grpc.ClientUnaryCall;
  AddDistinct(argument: _counter_v1_AddDistinctRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_AddDistinctResponse__Output>): grpc.ClientUnaryCall;
  AddDistinct(argument: _counter_v1_AddDistinctRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_AddDistinctResponse__Output>): grpc.ClientUnaryCall;
  AddDistinct(argument: _counter_v1_AddDistinctRequest, callback: grpc.requestCallback<_counter_v1_AddDistinctResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Distinct counts (HyperLogLog, 2^14 registers, ~0.81% standard error).
   * Adds members to a distinct counter, created on first use. Idempotent:
   * adding a member again changes nothing.
   */
  addDistinct(argument: _counter_v1_AddDistinctRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_AddDistinctResponse__Output>): grpc.ClientUnaryCall;
  addDistinct(argument: _counter_v1_AddDistinctRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_AddDistinctResponse__Output>): grpc.ClientUnaryCall;
  addDistinct(argument: _counter_v1_AddDistinctRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_AddDistinctResponse__Output>): grpc.ClientUnaryCall;
  addDistinct(argument: _counter_v1_AddDistinctRequest, callback: grpc.requestCallback<_counter_v1_AddDistinctResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Makes a counter of any kind read 0 from a cut point on: every increment
   * (member, distinct member) acknowledged before the cut is cleared away,
   * every one sent after Clear returns is counted. One small write per
   * shard; racing increments are never counted after being cleared.
   * NOT_FOUND for a name that does not exist. An idempotency key makes a
   * retry safe: a retry of a clear that happened answers applied=false and
   * clears nothing more.
   */
  Clear(argument: _counter_v1_ClearRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ClearResponse__Output>): grpc.ClientUnaryCall;
  Clear(argument: _counter_v1_ClearRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_ClearResponse__Output>): grpc.ClientUnaryCall;
  Clear(argument: _counter_v1_ClearRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ClearResponse__Output>): grpc.ClientUnaryCall;
  Clear(argument: _counter_v1_ClearRequest, callback: grpc.requestCallback<_counter_v1_ClearResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Makes a counter of any kind read 0 from a cut point on: every increment
   * (member, distinct member) acknowledged before the cut is cleared away,
   * every one sent after Clear returns is counted. One small write per
   * shard; racing increments are never counted after being cleared.
   * NOT_FOUND for a name that does not exist. An idempotency key makes a
   * retry safe: a retry of a clear that happened answers applied=false and
   * clears nothing more.
   */
  clear(argument: _counter_v1_ClearRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ClearResponse__Output>): grpc.ClientUnaryCall;
  clear(argument: _counter_v1_ClearRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_ClearResponse__Output>): grpc.ClientUnaryCall;
  clear(argument: _counter_v1_ClearRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ClearResponse__Output>): grpc.ClientUnaryCall;
  clear(argument: _counter_v1_ClearRequest, callback: grpc.requestCallback<_counter_v1_ClearResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Estimated number of distinct members in the union of the named counters.
   */
  CountDistinct(argument: _counter_v1_CountDistinctRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_CountDistinctResponse__Output>): grpc.ClientUnaryCall;
  CountDistinct(argument: _counter_v1_CountDistinctRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_CountDistinctResponse__Output>): grpc.ClientUnaryCall;
  CountDistinct(argument: _counter_v1_CountDistinctRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_CountDistinctResponse__Output>): grpc.ClientUnaryCall;
  CountDistinct(argument: _counter_v1_CountDistinctRequest, callback: grpc.requestCallback<_counter_v1_CountDistinctResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Estimated number of distinct members in the union of the named counters.
   */
  countDistinct(argument: _counter_v1_CountDistinctRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_CountDistinctResponse__Output>): grpc.ClientUnaryCall;
  countDistinct(argument: _counter_v1_CountDistinctRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_CountDistinctResponse__Output>): grpc.ClientUnaryCall;
  countDistinct(argument: _counter_v1_CountDistinctRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_CountDistinctResponse__Output>): grpc.ClientUnaryCall;
  countDistinct(argument: _counter_v1_CountDistinctRequest, callback: grpc.requestCallback<_counter_v1_CountDistinctResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Adds amount (non-zero, may be negative) to a counter. Returns only after
   * the increment is durable. applied=false means a duplicate of an earlier
   * idempotency key.
   */
  Increment(argument: _counter_v1_IncrementRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_IncrementResponse__Output>): grpc.ClientUnaryCall;
  Increment(argument: _counter_v1_IncrementRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_IncrementResponse__Output>): grpc.ClientUnaryCall;
  Increment(argument: _counter_v1_IncrementRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_IncrementResponse__Output>): grpc.ClientUnaryCall;
  Increment(argument: _counter_v1_IncrementRequest, callback: grpc.requestCallback<_counter_v1_IncrementResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Adds amount (non-zero, may be negative) to a counter. Returns only after
   * the increment is durable. applied=false means a duplicate of an earlier
   * idempotency key.
   */
  increment(argument: _counter_v1_IncrementRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_IncrementResponse__Output>): grpc.ClientUnaryCall;
  increment(argument: _counter_v1_IncrementRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_IncrementResponse__Output>): grpc.ClientUnaryCall;
  increment(argument: _counter_v1_IncrementRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_IncrementResponse__Output>): grpc.ClientUnaryCall;
  increment(argument: _counter_v1_IncrementRequest, callback: grpc.requestCallback<_counter_v1_IncrementResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Many increments, possibly to different counters, in one call.
   */
  IncrementBatch(argument: _counter_v1_IncrementBatchRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_IncrementBatchResponse__Output>): grpc.ClientUnaryCall;
  IncrementBatch(argument: _counter_v1_IncrementBatchRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_IncrementBatchResponse__Output>): grpc.ClientUnaryCall;
  IncrementBatch(argument: _counter_v1_IncrementBatchRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_IncrementBatchResponse__Output>): grpc.ClientUnaryCall;
  IncrementBatch(argument: _counter_v1_IncrementBatchRequest, callback: grpc.requestCallback<_counter_v1_IncrementBatchResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Many increments, possibly to different counters, in one call.
   */
  incrementBatch(argument: _counter_v1_IncrementBatchRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_IncrementBatchResponse__Output>): grpc.ClientUnaryCall;
  incrementBatch(argument: _counter_v1_IncrementBatchRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_IncrementBatchResponse__Output>): grpc.ClientUnaryCall;
  incrementBatch(argument: _counter_v1_IncrementBatchRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_IncrementBatchResponse__Output>): grpc.ClientUnaryCall;
  incrementBatch(argument: _counter_v1_IncrementBatchRequest, callback: grpc.requestCallback<_counter_v1_IncrementBatchResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Batches of increments on one long-lived stream, for clients that send
   * continuously (docs/clients.md, "IncrementStream"). Each request is a
   * batch with a sequence number the client chooses; each response answers
   * one batch by that number, in any order: its results, as IncrementBatch
   * gives them, or its error, as IncrementBatch would have failed (status
   * code, message, ErrorInfo reason). A failed batch fails alone; the
   * stream goes on. The stream itself ends with a status only for a
   * malformed message, a sequence number reused while its batch is in
   * flight, credentials, or the server going away: every batch then still
   * unanswered has an unknown outcome (resend it only with the same keys).
   */
  IncrementStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_counter_v1_IncrementStreamRequest, _counter_v1_IncrementStreamResponse__Output>;
  IncrementStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_counter_v1_IncrementStreamRequest, _counter_v1_IncrementStreamResponse__Output>;
  /**
   * Batches of increments on one long-lived stream, for clients that send
   * continuously (docs/clients.md, "IncrementStream"). Each request is a
   * batch with a sequence number the client chooses; each response answers
   * one batch by that number, in any order: its results, as IncrementBatch
   * gives them, or its error, as IncrementBatch would have failed (status
   * code, message, ErrorInfo reason). A failed batch fails alone; the
   * stream goes on. The stream itself ends with a status only for a
   * malformed message, a sequence number reused while its batch is in
   * flight, credentials, or the server going away: every batch then still
   * unanswered has an unknown outcome (resend it only with the same keys).
   */
  incrementStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_counter_v1_IncrementStreamRequest, _counter_v1_IncrementStreamResponse__Output>;
  incrementStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_counter_v1_IncrementStreamRequest, _counter_v1_IncrementStreamResponse__Output>;
  
  IsMember(argument: _counter_v1_IsMemberRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_IsMemberResponse__Output>): grpc.ClientUnaryCall;
  IsMember(argument: _counter_v1_IsMemberRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_IsMemberResponse__Output>): grpc.ClientUnaryCall;
  IsMember(argument: _counter_v1_IsMemberRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_IsMemberResponse__Output>): grpc.ClientUnaryCall;
  IsMember(argument: _counter_v1_IsMemberRequest, callback: grpc.requestCallback<_counter_v1_IsMemberResponse__Output>): grpc.ClientUnaryCall;
  isMember(argument: _counter_v1_IsMemberRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_IsMemberResponse__Output>): grpc.ClientUnaryCall;
  isMember(argument: _counter_v1_IsMemberRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_IsMemberResponse__Output>): grpc.ClientUnaryCall;
  isMember(argument: _counter_v1_IsMemberRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_IsMemberResponse__Output>): grpc.ClientUnaryCall;
  isMember(argument: _counter_v1_IsMemberRequest, callback: grpc.requestCallback<_counter_v1_IsMemberResponse__Output>): grpc.ClientUnaryCall;
  
  Read(argument: _counter_v1_ReadRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  Read(argument: _counter_v1_ReadRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  Read(argument: _counter_v1_ReadRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  Read(argument: _counter_v1_ReadRequest, callback: grpc.requestCallback<_counter_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  read(argument: _counter_v1_ReadRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  read(argument: _counter_v1_ReadRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  read(argument: _counter_v1_ReadRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  read(argument: _counter_v1_ReadRequest, callback: grpc.requestCallback<_counter_v1_ReadResponse__Output>): grpc.ClientUnaryCall;
  
  ReadMany(argument: _counter_v1_ReadManyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReadManyResponse__Output>): grpc.ClientUnaryCall;
  ReadMany(argument: _counter_v1_ReadManyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_ReadManyResponse__Output>): grpc.ClientUnaryCall;
  ReadMany(argument: _counter_v1_ReadManyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReadManyResponse__Output>): grpc.ClientUnaryCall;
  ReadMany(argument: _counter_v1_ReadManyRequest, callback: grpc.requestCallback<_counter_v1_ReadManyResponse__Output>): grpc.ClientUnaryCall;
  readMany(argument: _counter_v1_ReadManyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReadManyResponse__Output>): grpc.ClientUnaryCall;
  readMany(argument: _counter_v1_ReadManyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_ReadManyResponse__Output>): grpc.ClientUnaryCall;
  readMany(argument: _counter_v1_ReadManyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReadManyResponse__Output>): grpc.ClientUnaryCall;
  readMany(argument: _counter_v1_ReadManyRequest, callback: grpc.requestCallback<_counter_v1_ReadManyResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Pages of reads on one long-lived stream, for clients that read
   * continuously (docs/clients.md, "ReadStream"). Each request is a
   * ReadMany with a sequence number the client chooses; each response
   * answers one page by that number, in any order: its values, as ReadMany
   * gives them, or its error, as ReadMany would have failed. A failed page
   * fails alone; the stream goes on. The stream itself ends with a status
   * only for a malformed message, a sequence number reused while its page
   * is in flight, credentials, or the server going away. A read changes
   * nothing: any page left unanswered may be sent again, anywhere.
   */
  ReadStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_counter_v1_ReadStreamRequest, _counter_v1_ReadStreamResponse__Output>;
  ReadStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_counter_v1_ReadStreamRequest, _counter_v1_ReadStreamResponse__Output>;
  /**
   * Pages of reads on one long-lived stream, for clients that read
   * continuously (docs/clients.md, "ReadStream"). Each request is a
   * ReadMany with a sequence number the client chooses; each response
   * answers one page by that number, in any order: its values, as ReadMany
   * gives them, or its error, as ReadMany would have failed. A failed page
   * fails alone; the stream goes on. The stream itself ends with a status
   * only for a malformed message, a sequence number reused while its page
   * is in flight, credentials, or the server going away. A read changes
   * nothing: any page left unanswered may be sent again, anywhere.
   */
  readStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_counter_v1_ReadStreamRequest, _counter_v1_ReadStreamResponse__Output>;
  readStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_counter_v1_ReadStreamRequest, _counter_v1_ReadStreamResponse__Output>;
  
  /**
   * The sum of a windowed counter's increments over the last last_ms.
   */
  ReadWindow(argument: _counter_v1_ReadWindowRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReadWindowResponse__Output>): grpc.ClientUnaryCall;
  ReadWindow(argument: _counter_v1_ReadWindowRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_ReadWindowResponse__Output>): grpc.ClientUnaryCall;
  ReadWindow(argument: _counter_v1_ReadWindowRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReadWindowResponse__Output>): grpc.ClientUnaryCall;
  ReadWindow(argument: _counter_v1_ReadWindowRequest, callback: grpc.requestCallback<_counter_v1_ReadWindowResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The sum of a windowed counter's increments over the last last_ms.
   */
  readWindow(argument: _counter_v1_ReadWindowRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReadWindowResponse__Output>): grpc.ClientUnaryCall;
  readWindow(argument: _counter_v1_ReadWindowRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_ReadWindowResponse__Output>): grpc.ClientUnaryCall;
  readWindow(argument: _counter_v1_ReadWindowRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReadWindowResponse__Output>): grpc.ClientUnaryCall;
  readWindow(argument: _counter_v1_ReadWindowRequest, callback: grpc.requestCallback<_counter_v1_ReadWindowResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Membership counters (likes, follows, votes): makes a member present or
   * absent; the count changes only when the member's state flips.
   */
  SetMember(argument: _counter_v1_SetMemberRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_SetMemberResponse__Output>): grpc.ClientUnaryCall;
  SetMember(argument: _counter_v1_SetMemberRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_SetMemberResponse__Output>): grpc.ClientUnaryCall;
  SetMember(argument: _counter_v1_SetMemberRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_SetMemberResponse__Output>): grpc.ClientUnaryCall;
  SetMember(argument: _counter_v1_SetMemberRequest, callback: grpc.requestCallback<_counter_v1_SetMemberResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Membership counters (likes, follows, votes): makes a member present or
   * absent; the count changes only when the member's state flips.
   */
  setMember(argument: _counter_v1_SetMemberRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_SetMemberResponse__Output>): grpc.ClientUnaryCall;
  setMember(argument: _counter_v1_SetMemberRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_SetMemberResponse__Output>): grpc.ClientUnaryCall;
  setMember(argument: _counter_v1_SetMemberRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_SetMemberResponse__Output>): grpc.ClientUnaryCall;
  setMember(argument: _counter_v1_SetMemberRequest, callback: grpc.requestCallback<_counter_v1_SetMemberResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface CounterServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Distinct counts (HyperLogLog, 2^14 registers, ~0.81% standard error).
   * Adds members to a distinct counter, created on first use. Idempotent:
   * adding a member again changes nothing.
   */
  AddDistinct: grpc.handleUnaryCall<_counter_v1_AddDistinctRequest__Output, _counter_v1_AddDistinctResponse>;
  
  /**
   * Makes a counter of any kind read 0 from a cut point on: every increment
   * (member, distinct member) acknowledged before the cut is cleared away,
   * every one sent after Clear returns is counted. One small write per
   * shard; racing increments are never counted after being cleared.
   * NOT_FOUND for a name that does not exist. An idempotency key makes a
   * retry safe: a retry of a clear that happened answers applied=false and
   * clears nothing more.
   */
  Clear: grpc.handleUnaryCall<_counter_v1_ClearRequest__Output, _counter_v1_ClearResponse>;
  
  /**
   * Estimated number of distinct members in the union of the named counters.
   */
  CountDistinct: grpc.handleUnaryCall<_counter_v1_CountDistinctRequest__Output, _counter_v1_CountDistinctResponse>;
  
  /**
   * Adds amount (non-zero, may be negative) to a counter. Returns only after
   * the increment is durable. applied=false means a duplicate of an earlier
   * idempotency key.
   */
  Increment: grpc.handleUnaryCall<_counter_v1_IncrementRequest__Output, _counter_v1_IncrementResponse>;
  
  /**
   * Many increments, possibly to different counters, in one call.
   */
  IncrementBatch: grpc.handleUnaryCall<_counter_v1_IncrementBatchRequest__Output, _counter_v1_IncrementBatchResponse>;
  
  /**
   * Batches of increments on one long-lived stream, for clients that send
   * continuously (docs/clients.md, "IncrementStream"). Each request is a
   * batch with a sequence number the client chooses; each response answers
   * one batch by that number, in any order: its results, as IncrementBatch
   * gives them, or its error, as IncrementBatch would have failed (status
   * code, message, ErrorInfo reason). A failed batch fails alone; the
   * stream goes on. The stream itself ends with a status only for a
   * malformed message, a sequence number reused while its batch is in
   * flight, credentials, or the server going away: every batch then still
   * unanswered has an unknown outcome (resend it only with the same keys).
   */
  IncrementStream: grpc.handleBidiStreamingCall<_counter_v1_IncrementStreamRequest__Output, _counter_v1_IncrementStreamResponse>;
  
  IsMember: grpc.handleUnaryCall<_counter_v1_IsMemberRequest__Output, _counter_v1_IsMemberResponse>;
  
  Read: grpc.handleUnaryCall<_counter_v1_ReadRequest__Output, _counter_v1_ReadResponse>;
  
  ReadMany: grpc.handleUnaryCall<_counter_v1_ReadManyRequest__Output, _counter_v1_ReadManyResponse>;
  
  /**
   * Pages of reads on one long-lived stream, for clients that read
   * continuously (docs/clients.md, "ReadStream"). Each request is a
   * ReadMany with a sequence number the client chooses; each response
   * answers one page by that number, in any order: its values, as ReadMany
   * gives them, or its error, as ReadMany would have failed. A failed page
   * fails alone; the stream goes on. The stream itself ends with a status
   * only for a malformed message, a sequence number reused while its page
   * is in flight, credentials, or the server going away. A read changes
   * nothing: any page left unanswered may be sent again, anywhere.
   */
  ReadStream: grpc.handleBidiStreamingCall<_counter_v1_ReadStreamRequest__Output, _counter_v1_ReadStreamResponse>;
  
  /**
   * The sum of a windowed counter's increments over the last last_ms.
   */
  ReadWindow: grpc.handleUnaryCall<_counter_v1_ReadWindowRequest__Output, _counter_v1_ReadWindowResponse>;
  
  /**
   * Membership counters (likes, follows, votes): makes a member present or
   * absent; the count changes only when the member's state flips.
   */
  SetMember: grpc.handleUnaryCall<_counter_v1_SetMemberRequest__Output, _counter_v1_SetMemberResponse>;
  
}

export interface CounterServiceDefinition extends grpc.ServiceDefinition {
  AddDistinct: MethodDefinition<_counter_v1_AddDistinctRequest, _counter_v1_AddDistinctResponse, _counter_v1_AddDistinctRequest__Output, _counter_v1_AddDistinctResponse__Output>
  Clear: MethodDefinition<_counter_v1_ClearRequest, _counter_v1_ClearResponse, _counter_v1_ClearRequest__Output, _counter_v1_ClearResponse__Output>
  CountDistinct: MethodDefinition<_counter_v1_CountDistinctRequest, _counter_v1_CountDistinctResponse, _counter_v1_CountDistinctRequest__Output, _counter_v1_CountDistinctResponse__Output>
  Increment: MethodDefinition<_counter_v1_IncrementRequest, _counter_v1_IncrementResponse, _counter_v1_IncrementRequest__Output, _counter_v1_IncrementResponse__Output>
  IncrementBatch: MethodDefinition<_counter_v1_IncrementBatchRequest, _counter_v1_IncrementBatchResponse, _counter_v1_IncrementBatchRequest__Output, _counter_v1_IncrementBatchResponse__Output>
  IncrementStream: MethodDefinition<_counter_v1_IncrementStreamRequest, _counter_v1_IncrementStreamResponse, _counter_v1_IncrementStreamRequest__Output, _counter_v1_IncrementStreamResponse__Output>
  IsMember: MethodDefinition<_counter_v1_IsMemberRequest, _counter_v1_IsMemberResponse, _counter_v1_IsMemberRequest__Output, _counter_v1_IsMemberResponse__Output>
  Read: MethodDefinition<_counter_v1_ReadRequest, _counter_v1_ReadResponse, _counter_v1_ReadRequest__Output, _counter_v1_ReadResponse__Output>
  ReadMany: MethodDefinition<_counter_v1_ReadManyRequest, _counter_v1_ReadManyResponse, _counter_v1_ReadManyRequest__Output, _counter_v1_ReadManyResponse__Output>
  ReadStream: MethodDefinition<_counter_v1_ReadStreamRequest, _counter_v1_ReadStreamResponse, _counter_v1_ReadStreamRequest__Output, _counter_v1_ReadStreamResponse__Output>
  ReadWindow: MethodDefinition<_counter_v1_ReadWindowRequest, _counter_v1_ReadWindowResponse, _counter_v1_ReadWindowRequest__Output, _counter_v1_ReadWindowResponse__Output>
  SetMember: MethodDefinition<_counter_v1_SetMemberRequest, _counter_v1_SetMemberResponse, _counter_v1_SetMemberRequest__Output, _counter_v1_SetMemberResponse__Output>
}
