// Original file: proto/shard.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AppendEntriesRequest as _tally_shard_v1_AppendEntriesRequest, AppendEntriesRequest__Output as _tally_shard_v1_AppendEntriesRequest__Output } from '../../../tally/shard/v1/AppendEntriesRequest.ts';
import type { AppendEntriesResponse as _tally_shard_v1_AppendEntriesResponse, AppendEntriesResponse__Output as _tally_shard_v1_AppendEntriesResponse__Output } from '../../../tally/shard/v1/AppendEntriesResponse.ts';
import type { ApplyAnswer as _tally_shard_v1_ApplyAnswer, ApplyAnswer__Output as _tally_shard_v1_ApplyAnswer__Output } from '../../../tally/shard/v1/ApplyAnswer.ts';
import type { ApplyFrame as _tally_shard_v1_ApplyFrame, ApplyFrame__Output as _tally_shard_v1_ApplyFrame__Output } from '../../../tally/shard/v1/ApplyFrame.ts';
import type { ApplyRequest as _tally_shard_v1_ApplyRequest, ApplyRequest__Output as _tally_shard_v1_ApplyRequest__Output } from '../../../tally/shard/v1/ApplyRequest.ts';
import type { ApplyResponse as _tally_shard_v1_ApplyResponse, ApplyResponse__Output as _tally_shard_v1_ApplyResponse__Output } from '../../../tally/shard/v1/ApplyResponse.ts';
import type { ChangedShardsRequest as _tally_shard_v1_ChangedShardsRequest, ChangedShardsRequest__Output as _tally_shard_v1_ChangedShardsRequest__Output } from '../../../tally/shard/v1/ChangedShardsRequest.ts';
import type { ChangedShardsResponse as _tally_shard_v1_ChangedShardsResponse, ChangedShardsResponse__Output as _tally_shard_v1_ChangedShardsResponse__Output } from '../../../tally/shard/v1/ChangedShardsResponse.ts';
import type { CheckMembersRequest as _tally_shard_v1_CheckMembersRequest, CheckMembersRequest__Output as _tally_shard_v1_CheckMembersRequest__Output } from '../../../tally/shard/v1/CheckMembersRequest.ts';
import type { CheckMembersResponse as _tally_shard_v1_CheckMembersResponse, CheckMembersResponse__Output as _tally_shard_v1_CheckMembersResponse__Output } from '../../../tally/shard/v1/CheckMembersResponse.ts';
import type { InstallSnapshotRequest as _tally_shard_v1_InstallSnapshotRequest, InstallSnapshotRequest__Output as _tally_shard_v1_InstallSnapshotRequest__Output } from '../../../tally/shard/v1/InstallSnapshotRequest.ts';
import type { MemberCountsResponse as _tally_shard_v1_MemberCountsResponse, MemberCountsResponse__Output as _tally_shard_v1_MemberCountsResponse__Output } from '../../../tally/shard/v1/MemberCountsResponse.ts';
import type { ReadComponentsResponse as _tally_shard_v1_ReadComponentsResponse, ReadComponentsResponse__Output as _tally_shard_v1_ReadComponentsResponse__Output } from '../../../tally/shard/v1/ReadComponentsResponse.ts';
import type { ReadShardsAnswer as _tally_shard_v1_ReadShardsAnswer, ReadShardsAnswer__Output as _tally_shard_v1_ReadShardsAnswer__Output } from '../../../tally/shard/v1/ReadShardsAnswer.ts';
import type { ReadShardsFrame as _tally_shard_v1_ReadShardsFrame, ReadShardsFrame__Output as _tally_shard_v1_ReadShardsFrame__Output } from '../../../tally/shard/v1/ReadShardsFrame.ts';
import type { ReadShardsRequest as _tally_shard_v1_ReadShardsRequest, ReadShardsRequest__Output as _tally_shard_v1_ReadShardsRequest__Output } from '../../../tally/shard/v1/ReadShardsRequest.ts';
import type { ReadShardsResponse as _tally_shard_v1_ReadShardsResponse, ReadShardsResponse__Output as _tally_shard_v1_ReadShardsResponse__Output } from '../../../tally/shard/v1/ReadShardsResponse.ts';
import type { ReadSketchesRequest as _tally_shard_v1_ReadSketchesRequest, ReadSketchesRequest__Output as _tally_shard_v1_ReadSketchesRequest__Output } from '../../../tally/shard/v1/ReadSketchesRequest.ts';
import type { ReadSketchesResponse as _tally_shard_v1_ReadSketchesResponse, ReadSketchesResponse__Output as _tally_shard_v1_ReadSketchesResponse__Output } from '../../../tally/shard/v1/ReadSketchesResponse.ts';
import type { ReadWindowsRequest as _tally_shard_v1_ReadWindowsRequest, ReadWindowsRequest__Output as _tally_shard_v1_ReadWindowsRequest__Output } from '../../../tally/shard/v1/ReadWindowsRequest.ts';
import type { ReconcileRequest as _tally_shard_v1_ReconcileRequest, ReconcileRequest__Output as _tally_shard_v1_ReconcileRequest__Output } from '../../../tally/shard/v1/ReconcileRequest.ts';
import type { ReconcileResponse as _tally_shard_v1_ReconcileResponse, ReconcileResponse__Output as _tally_shard_v1_ReconcileResponse__Output } from '../../../tally/shard/v1/ReconcileResponse.ts';
import type { ReplicateAnswer as _tally_shard_v1_ReplicateAnswer, ReplicateAnswer__Output as _tally_shard_v1_ReplicateAnswer__Output } from '../../../tally/shard/v1/ReplicateAnswer.ts';
import type { ReplicateFrame as _tally_shard_v1_ReplicateFrame, ReplicateFrame__Output as _tally_shard_v1_ReplicateFrame__Output } from '../../../tally/shard/v1/ReplicateFrame.ts';
import type { SetRoleRequest as _tally_shard_v1_SetRoleRequest, SetRoleRequest__Output as _tally_shard_v1_SetRoleRequest__Output } from '../../../tally/shard/v1/SetRoleRequest.ts';
import type { SnapshotStreamPiece as _tally_shard_v1_SnapshotStreamPiece, SnapshotStreamPiece__Output as _tally_shard_v1_SnapshotStreamPiece__Output } from '../../../tally/shard/v1/SnapshotStreamPiece.ts';
import type { StatusRequest as _tally_shard_v1_StatusRequest, StatusRequest__Output as _tally_shard_v1_StatusRequest__Output } from '../../../tally/shard/v1/StatusRequest.ts';
import type { StatusResponse as _tally_shard_v1_StatusResponse, StatusResponse__Output as _tally_shard_v1_StatusResponse__Output } from '../../../tally/shard/v1/StatusResponse.ts';
import type { StreamSnapshotRequest as _tally_shard_v1_StreamSnapshotRequest, StreamSnapshotRequest__Output as _tally_shard_v1_StreamSnapshotRequest__Output } from '../../../tally/shard/v1/StreamSnapshotRequest.ts';

export interface ShardNodeClient extends grpc.Client {
  /**
   * Primary to follower: entries that continue the follower's log.
   */
  AppendEntries(argument: _tally_shard_v1_AppendEntriesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_AppendEntriesResponse__Output>): grpc.ClientUnaryCall;
  AppendEntries(argument: _tally_shard_v1_AppendEntriesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_AppendEntriesResponse__Output>): grpc.ClientUnaryCall;
  AppendEntries(argument: _tally_shard_v1_AppendEntriesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_AppendEntriesResponse__Output>): grpc.ClientUnaryCall;
  AppendEntries(argument: _tally_shard_v1_AppendEntriesRequest, callback: grpc.requestCallback<_tally_shard_v1_AppendEntriesResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Primary to follower: entries that continue the follower's log.
   */
  appendEntries(argument: _tally_shard_v1_AppendEntriesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_AppendEntriesResponse__Output>): grpc.ClientUnaryCall;
  appendEntries(argument: _tally_shard_v1_AppendEntriesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_AppendEntriesResponse__Output>): grpc.ClientUnaryCall;
  appendEntries(argument: _tally_shard_v1_AppendEntriesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_AppendEntriesResponse__Output>): grpc.ClientUnaryCall;
  appendEntries(argument: _tally_shard_v1_AppendEntriesRequest, callback: grpc.requestCallback<_tally_shard_v1_AppendEntriesResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Primary only. Appends groups of increments to the log and applies them.
   * Each group is atomic: all of its items apply or none do. Groups are
   * independent. Refused (FAILED_PRECONDITION) unless epoch is the node's.
   */
  Apply(argument: _tally_shard_v1_ApplyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ApplyResponse__Output>): grpc.ClientUnaryCall;
  Apply(argument: _tally_shard_v1_ApplyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_ApplyResponse__Output>): grpc.ClientUnaryCall;
  Apply(argument: _tally_shard_v1_ApplyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ApplyResponse__Output>): grpc.ClientUnaryCall;
  Apply(argument: _tally_shard_v1_ApplyRequest, callback: grpc.requestCallback<_tally_shard_v1_ApplyResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Primary only. Appends groups of increments to the log and applies them.
   * Each group is atomic: all of its items apply or none do. Groups are
   * independent. Refused (FAILED_PRECONDITION) unless epoch is the node's.
   */
  apply(argument: _tally_shard_v1_ApplyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ApplyResponse__Output>): grpc.ClientUnaryCall;
  apply(argument: _tally_shard_v1_ApplyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_ApplyResponse__Output>): grpc.ClientUnaryCall;
  apply(argument: _tally_shard_v1_ApplyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ApplyResponse__Output>): grpc.ClientUnaryCall;
  apply(argument: _tally_shard_v1_ApplyRequest, callback: grpc.requestCallback<_tally_shard_v1_ApplyResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Apply as a long-lived stream (router to primary): each frame carries
   * one ApplyRequest and a sequence number; each answer carries the same
   * ApplyResponse, or the error the unary call would have ended with, for
   * one frame by its seq. Answers may come out of order. A frame is checked,
   * committed and acknowledged exactly as Apply is. A stream that ends or
   * breaks says nothing about frames it left unanswered (they may have applied).
   */
  ApplyStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_tally_shard_v1_ApplyFrame, _tally_shard_v1_ApplyAnswer__Output>;
  ApplyStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_tally_shard_v1_ApplyFrame, _tally_shard_v1_ApplyAnswer__Output>;
  /**
   * Apply as a long-lived stream (router to primary): each frame carries
   * one ApplyRequest and a sequence number; each answer carries the same
   * ApplyResponse, or the error the unary call would have ended with, for
   * one frame by its seq. Answers may come out of order. A frame is checked,
   * committed and acknowledged exactly as Apply is. A stream that ends or
   * breaks says nothing about frames it left unanswered (they may have applied).
   */
  applyStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_tally_shard_v1_ApplyFrame, _tally_shard_v1_ApplyAnswer__Output>;
  applyStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_tally_shard_v1_ApplyFrame, _tally_shard_v1_ApplyAnswer__Output>;
  
  /**
   * The region publisher's feed (docs/regions.md): the totals of the shards
   * whose total or generation changed since a position this node gave, as
   * columns, counting only what a failover can no longer drop (as ReadShards).
   * A position the node does not know (another log, a restart, too old)
   * answers every shard it holds, full=true.
   */
  ChangedShards(argument: _tally_shard_v1_ChangedShardsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ChangedShardsResponse__Output>): grpc.ClientUnaryCall;
  ChangedShards(argument: _tally_shard_v1_ChangedShardsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_ChangedShardsResponse__Output>): grpc.ClientUnaryCall;
  ChangedShards(argument: _tally_shard_v1_ChangedShardsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ChangedShardsResponse__Output>): grpc.ClientUnaryCall;
  ChangedShards(argument: _tally_shard_v1_ChangedShardsRequest, callback: grpc.requestCallback<_tally_shard_v1_ChangedShardsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The region publisher's feed (docs/regions.md): the totals of the shards
   * whose total or generation changed since a position this node gave, as
   * columns, counting only what a failover can no longer drop (as ReadShards).
   * A position the node does not know (another log, a restart, too old)
   * answers every shard it holds, full=true.
   */
  changedShards(argument: _tally_shard_v1_ChangedShardsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ChangedShardsResponse__Output>): grpc.ClientUnaryCall;
  changedShards(argument: _tally_shard_v1_ChangedShardsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_ChangedShardsResponse__Output>): grpc.ClientUnaryCall;
  changedShards(argument: _tally_shard_v1_ChangedShardsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ChangedShardsResponse__Output>): grpc.ClientUnaryCall;
  changedShards(argument: _tally_shard_v1_ChangedShardsRequest, callback: grpc.requestCallback<_tally_shard_v1_ChangedShardsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Whether each member is in its shard's member set.
   */
  CheckMembers(argument: _tally_shard_v1_CheckMembersRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_CheckMembersResponse__Output>): grpc.ClientUnaryCall;
  CheckMembers(argument: _tally_shard_v1_CheckMembersRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_CheckMembersResponse__Output>): grpc.ClientUnaryCall;
  CheckMembers(argument: _tally_shard_v1_CheckMembersRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_CheckMembersResponse__Output>): grpc.ClientUnaryCall;
  CheckMembers(argument: _tally_shard_v1_CheckMembersRequest, callback: grpc.requestCallback<_tally_shard_v1_CheckMembersResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Whether each member is in its shard's member set.
   */
  checkMembers(argument: _tally_shard_v1_CheckMembersRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_CheckMembersResponse__Output>): grpc.ClientUnaryCall;
  checkMembers(argument: _tally_shard_v1_CheckMembersRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_CheckMembersResponse__Output>): grpc.ClientUnaryCall;
  checkMembers(argument: _tally_shard_v1_CheckMembersRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_CheckMembersResponse__Output>): grpc.ClientUnaryCall;
  checkMembers(argument: _tally_shard_v1_CheckMembersRequest, callback: grpc.requestCallback<_tally_shard_v1_CheckMembersResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Primary to follower: replaces the follower's whole state with the
   * primary's checkpoint, in chunks sent in order. Chunk 0 empties the
   * follower; the chunk marked done makes the snapshot its log's start.
   */
  InstallSnapshot(argument: _tally_shard_v1_InstallSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_AppendEntriesResponse__Output>): grpc.ClientUnaryCall;
  InstallSnapshot(argument: _tally_shard_v1_InstallSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_AppendEntriesResponse__Output>): grpc.ClientUnaryCall;
  InstallSnapshot(argument: _tally_shard_v1_InstallSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_AppendEntriesResponse__Output>): grpc.ClientUnaryCall;
  InstallSnapshot(argument: _tally_shard_v1_InstallSnapshotRequest, callback: grpc.requestCallback<_tally_shard_v1_AppendEntriesResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Primary to follower: replaces the follower's whole state with the
   * primary's checkpoint, in chunks sent in order. Chunk 0 empties the
   * follower; the chunk marked done makes the snapshot its log's start.
   */
  installSnapshot(argument: _tally_shard_v1_InstallSnapshotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_AppendEntriesResponse__Output>): grpc.ClientUnaryCall;
  installSnapshot(argument: _tally_shard_v1_InstallSnapshotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_AppendEntriesResponse__Output>): grpc.ClientUnaryCall;
  installSnapshot(argument: _tally_shard_v1_InstallSnapshotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_AppendEntriesResponse__Output>): grpc.ClientUnaryCall;
  installSnapshot(argument: _tally_shard_v1_InstallSnapshotRequest, callback: grpc.requestCallback<_tally_shard_v1_AppendEntriesResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Each named shard's member-set size next to its total (rebuild, G8).
   */
  MemberCounts(argument: _tally_shard_v1_ReadShardsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_MemberCountsResponse__Output>): grpc.ClientUnaryCall;
  MemberCounts(argument: _tally_shard_v1_ReadShardsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_MemberCountsResponse__Output>): grpc.ClientUnaryCall;
  MemberCounts(argument: _tally_shard_v1_ReadShardsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_MemberCountsResponse__Output>): grpc.ClientUnaryCall;
  MemberCounts(argument: _tally_shard_v1_ReadShardsRequest, callback: grpc.requestCallback<_tally_shard_v1_MemberCountsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Each named shard's member-set size next to its total (rebuild, G8).
   */
  memberCounts(argument: _tally_shard_v1_ReadShardsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_MemberCountsResponse__Output>): grpc.ClientUnaryCall;
  memberCounts(argument: _tally_shard_v1_ReadShardsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_MemberCountsResponse__Output>): grpc.ClientUnaryCall;
  memberCounts(argument: _tally_shard_v1_ReadShardsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_MemberCountsResponse__Output>): grpc.ClientUnaryCall;
  memberCounts(argument: _tally_shard_v1_ReadShardsRequest, callback: grpc.requestCallback<_tally_shard_v1_MemberCountsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Each named shard's peer-region components (docs/regions.md).
   */
  ReadComponents(argument: _tally_shard_v1_ReadShardsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReadComponentsResponse__Output>): grpc.ClientUnaryCall;
  ReadComponents(argument: _tally_shard_v1_ReadShardsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_ReadComponentsResponse__Output>): grpc.ClientUnaryCall;
  ReadComponents(argument: _tally_shard_v1_ReadShardsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReadComponentsResponse__Output>): grpc.ClientUnaryCall;
  ReadComponents(argument: _tally_shard_v1_ReadShardsRequest, callback: grpc.requestCallback<_tally_shard_v1_ReadComponentsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Each named shard's peer-region components (docs/regions.md).
   */
  readComponents(argument: _tally_shard_v1_ReadShardsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReadComponentsResponse__Output>): grpc.ClientUnaryCall;
  readComponents(argument: _tally_shard_v1_ReadShardsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_ReadComponentsResponse__Output>): grpc.ClientUnaryCall;
  readComponents(argument: _tally_shard_v1_ReadShardsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReadComponentsResponse__Output>): grpc.ClientUnaryCall;
  readComponents(argument: _tally_shard_v1_ReadShardsRequest, callback: grpc.requestCallback<_tally_shard_v1_ReadComponentsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Current totals of the named shards (unknown shards are 0).
   */
  ReadShards(argument: _tally_shard_v1_ReadShardsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReadShardsResponse__Output>): grpc.ClientUnaryCall;
  ReadShards(argument: _tally_shard_v1_ReadShardsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_ReadShardsResponse__Output>): grpc.ClientUnaryCall;
  ReadShards(argument: _tally_shard_v1_ReadShardsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReadShardsResponse__Output>): grpc.ClientUnaryCall;
  ReadShards(argument: _tally_shard_v1_ReadShardsRequest, callback: grpc.requestCallback<_tally_shard_v1_ReadShardsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Current totals of the named shards (unknown shards are 0).
   */
  readShards(argument: _tally_shard_v1_ReadShardsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReadShardsResponse__Output>): grpc.ClientUnaryCall;
  readShards(argument: _tally_shard_v1_ReadShardsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_ReadShardsResponse__Output>): grpc.ClientUnaryCall;
  readShards(argument: _tally_shard_v1_ReadShardsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReadShardsResponse__Output>): grpc.ClientUnaryCall;
  readShards(argument: _tally_shard_v1_ReadShardsRequest, callback: grpc.requestCallback<_tally_shard_v1_ReadShardsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * ReadShards as a long-lived stream, answered by seq as ApplyStream is.
   */
  ReadShardsStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_tally_shard_v1_ReadShardsFrame, _tally_shard_v1_ReadShardsAnswer__Output>;
  ReadShardsStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_tally_shard_v1_ReadShardsFrame, _tally_shard_v1_ReadShardsAnswer__Output>;
  /**
   * ReadShards as a long-lived stream, answered by seq as ApplyStream is.
   */
  readShardsStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_tally_shard_v1_ReadShardsFrame, _tally_shard_v1_ReadShardsAnswer__Output>;
  readShardsStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_tally_shard_v1_ReadShardsFrame, _tally_shard_v1_ReadShardsAnswer__Output>;
  
  /**
   * The named shards' distinct-count sketches: each (empty bytes: none), or
   * with merge one sketch, their union, so the answer stays small however
   * many shards are named.
   */
  ReadSketches(argument: _tally_shard_v1_ReadSketchesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReadSketchesResponse__Output>): grpc.ClientUnaryCall;
  ReadSketches(argument: _tally_shard_v1_ReadSketchesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_ReadSketchesResponse__Output>): grpc.ClientUnaryCall;
  ReadSketches(argument: _tally_shard_v1_ReadSketchesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReadSketchesResponse__Output>): grpc.ClientUnaryCall;
  ReadSketches(argument: _tally_shard_v1_ReadSketchesRequest, callback: grpc.requestCallback<_tally_shard_v1_ReadSketchesResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The named shards' distinct-count sketches: each (empty bytes: none), or
   * with merge one sketch, their union, so the answer stays small however
   * many shards are named.
   */
  readSketches(argument: _tally_shard_v1_ReadSketchesRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReadSketchesResponse__Output>): grpc.ClientUnaryCall;
  readSketches(argument: _tally_shard_v1_ReadSketchesRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_ReadSketchesResponse__Output>): grpc.ClientUnaryCall;
  readSketches(argument: _tally_shard_v1_ReadSketchesRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReadSketchesResponse__Output>): grpc.ClientUnaryCall;
  readSketches(argument: _tally_shard_v1_ReadSketchesRequest, callback: grpc.requestCallback<_tally_shard_v1_ReadSketchesResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Each named shard's sum over its window buckets starting in [from_ms, to_ms).
   */
  ReadWindows(argument: _tally_shard_v1_ReadWindowsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReadShardsResponse__Output>): grpc.ClientUnaryCall;
  ReadWindows(argument: _tally_shard_v1_ReadWindowsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_ReadShardsResponse__Output>): grpc.ClientUnaryCall;
  ReadWindows(argument: _tally_shard_v1_ReadWindowsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReadShardsResponse__Output>): grpc.ClientUnaryCall;
  ReadWindows(argument: _tally_shard_v1_ReadWindowsRequest, callback: grpc.requestCallback<_tally_shard_v1_ReadShardsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Each named shard's sum over its window buckets starting in [from_ms, to_ms).
   */
  readWindows(argument: _tally_shard_v1_ReadWindowsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReadShardsResponse__Output>): grpc.ClientUnaryCall;
  readWindows(argument: _tally_shard_v1_ReadWindowsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_ReadShardsResponse__Output>): grpc.ClientUnaryCall;
  readWindows(argument: _tally_shard_v1_ReadWindowsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReadShardsResponse__Output>): grpc.ClientUnaryCall;
  readWindows(argument: _tally_shard_v1_ReadWindowsRequest, callback: grpc.requestCallback<_tally_shard_v1_ReadShardsResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Recomputes shard totals from the log and compares them with memory (G8).
   */
  Reconcile(argument: _tally_shard_v1_ReconcileRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReconcileResponse__Output>): grpc.ClientUnaryCall;
  Reconcile(argument: _tally_shard_v1_ReconcileRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_ReconcileResponse__Output>): grpc.ClientUnaryCall;
  Reconcile(argument: _tally_shard_v1_ReconcileRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReconcileResponse__Output>): grpc.ClientUnaryCall;
  Reconcile(argument: _tally_shard_v1_ReconcileRequest, callback: grpc.requestCallback<_tally_shard_v1_ReconcileResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Recomputes shard totals from the log and compares them with memory (G8).
   */
  reconcile(argument: _tally_shard_v1_ReconcileRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReconcileResponse__Output>): grpc.ClientUnaryCall;
  reconcile(argument: _tally_shard_v1_ReconcileRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_ReconcileResponse__Output>): grpc.ClientUnaryCall;
  reconcile(argument: _tally_shard_v1_ReconcileRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_ReconcileResponse__Output>): grpc.ClientUnaryCall;
  reconcile(argument: _tally_shard_v1_ReconcileRequest, callback: grpc.requestCallback<_tally_shard_v1_ReconcileResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * AppendEntries as one long-lived stream per pair (primary to follower):
   * each frame one AppendEntriesRequest (records, not columns) and a seq;
   * each answer the follower's position after that frame (it has fsync'd
   * up to last_lsn), or the error the unary call would have ended with.
   * Frames are handled in the order they arrive and answered in that order,
   * so a primary keeps several in flight, each continuing the one before
   * (log matching still checks every one). A stream that ends or breaks says
   * nothing about frames it left unanswered: the next stream's first answer
   * says where the follower's log ends.
   */
  ReplicateStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_tally_shard_v1_ReplicateFrame, _tally_shard_v1_ReplicateAnswer__Output>;
  ReplicateStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_tally_shard_v1_ReplicateFrame, _tally_shard_v1_ReplicateAnswer__Output>;
  /**
   * AppendEntries as one long-lived stream per pair (primary to follower):
   * each frame one AppendEntriesRequest (records, not columns) and a seq;
   * each answer the follower's position after that frame (it has fsync'd
   * up to last_lsn), or the error the unary call would have ended with.
   * Frames are handled in the order they arrive and answered in that order,
   * so a primary keeps several in flight, each continuing the one before
   * (log matching still checks every one). A stream that ends or breaks says
   * nothing about frames it left unanswered: the next stream's first answer
   * says where the follower's log ends.
   */
  replicateStream(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_tally_shard_v1_ReplicateFrame, _tally_shard_v1_ReplicateAnswer__Output>;
  replicateStream(options?: grpc.CallOptions): grpc.ClientDuplexStream<_tally_shard_v1_ReplicateFrame, _tally_shard_v1_ReplicateAnswer__Output>;
  
  /**
   * Router to node: your role, epoch and peer. Refused for an older epoch or
   * a superseded configuration version (SetRoleRequest.config_version).
   */
  SetRole(argument: _tally_shard_v1_SetRoleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  SetRole(argument: _tally_shard_v1_SetRoleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  SetRole(argument: _tally_shard_v1_SetRoleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  SetRole(argument: _tally_shard_v1_SetRoleRequest, callback: grpc.requestCallback<_tally_shard_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Router to node: your role, epoch and peer. Refused for an older epoch or
   * a superseded configuration version (SetRoleRequest.config_version).
   */
  setRole(argument: _tally_shard_v1_SetRoleRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  setRole(argument: _tally_shard_v1_SetRoleRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  setRole(argument: _tally_shard_v1_SetRoleRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  setRole(argument: _tally_shard_v1_SetRoleRequest, callback: grpc.requestCallback<_tally_shard_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  
  Status(argument: _tally_shard_v1_StatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  Status(argument: _tally_shard_v1_StatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  Status(argument: _tally_shard_v1_StatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  Status(argument: _tally_shard_v1_StatusRequest, callback: grpc.requestCallback<_tally_shard_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  status(argument: _tally_shard_v1_StatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  status(argument: _tally_shard_v1_StatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_tally_shard_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  status(argument: _tally_shard_v1_StatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_tally_shard_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  status(argument: _tally_shard_v1_StatusRequest, callback: grpc.requestCallback<_tally_shard_v1_StatusResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Router to primary, for a backup: the node's whole state as a follower
   * refilled from it gets it, at one moment: its checkpoint as the chunks
   * an InstallSnapshot carries (same content and checksums, the last marked
   * done), then every entry past the checkpoint up to the log's end when
   * the call arrived, in blocks as AppendEntries carries them, then a piece
   * marked last. Nothing is changed on the node.
   */
  StreamSnapshot(argument: _tally_shard_v1_StreamSnapshotRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_tally_shard_v1_SnapshotStreamPiece__Output>;
  StreamSnapshot(argument: _tally_shard_v1_StreamSnapshotRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_tally_shard_v1_SnapshotStreamPiece__Output>;
  /**
   * Router to primary, for a backup: the node's whole state as a follower
   * refilled from it gets it, at one moment: its checkpoint as the chunks
   * an InstallSnapshot carries (same content and checksums, the last marked
   * done), then every entry past the checkpoint up to the log's end when
   * the call arrived, in blocks as AppendEntries carries them, then a piece
   * marked last. Nothing is changed on the node.
   */
  streamSnapshot(argument: _tally_shard_v1_StreamSnapshotRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_tally_shard_v1_SnapshotStreamPiece__Output>;
  streamSnapshot(argument: _tally_shard_v1_StreamSnapshotRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_tally_shard_v1_SnapshotStreamPiece__Output>;
  
}

export interface ShardNodeHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Primary to follower: entries that continue the follower's log.
   */
  AppendEntries: grpc.handleUnaryCall<_tally_shard_v1_AppendEntriesRequest__Output, _tally_shard_v1_AppendEntriesResponse>;
  
  /**
   * Primary only. Appends groups of increments to the log and applies them.
   * Each group is atomic: all of its items apply or none do. Groups are
   * independent. Refused (FAILED_PRECONDITION) unless epoch is the node's.
   */
  Apply: grpc.handleUnaryCall<_tally_shard_v1_ApplyRequest__Output, _tally_shard_v1_ApplyResponse>;
  
  /**
   * Apply as a long-lived stream (router to primary): each frame carries
   * one ApplyRequest and a sequence number; each answer carries the same
   * ApplyResponse, or the error the unary call would have ended with, for
   * one frame by its seq. Answers may come out of order. A frame is checked,
   * committed and acknowledged exactly as Apply is. A stream that ends or
   * breaks says nothing about frames it left unanswered (they may have applied).
   */
  ApplyStream: grpc.handleBidiStreamingCall<_tally_shard_v1_ApplyFrame__Output, _tally_shard_v1_ApplyAnswer>;
  
  /**
   * The region publisher's feed (docs/regions.md): the totals of the shards
   * whose total or generation changed since a position this node gave, as
   * columns, counting only what a failover can no longer drop (as ReadShards).
   * A position the node does not know (another log, a restart, too old)
   * answers every shard it holds, full=true.
   */
  ChangedShards: grpc.handleUnaryCall<_tally_shard_v1_ChangedShardsRequest__Output, _tally_shard_v1_ChangedShardsResponse>;
  
  /**
   * Whether each member is in its shard's member set.
   */
  CheckMembers: grpc.handleUnaryCall<_tally_shard_v1_CheckMembersRequest__Output, _tally_shard_v1_CheckMembersResponse>;
  
  /**
   * Primary to follower: replaces the follower's whole state with the
   * primary's checkpoint, in chunks sent in order. Chunk 0 empties the
   * follower; the chunk marked done makes the snapshot its log's start.
   */
  InstallSnapshot: grpc.handleUnaryCall<_tally_shard_v1_InstallSnapshotRequest__Output, _tally_shard_v1_AppendEntriesResponse>;
  
  /**
   * Each named shard's member-set size next to its total (rebuild, G8).
   */
  MemberCounts: grpc.handleUnaryCall<_tally_shard_v1_ReadShardsRequest__Output, _tally_shard_v1_MemberCountsResponse>;
  
  /**
   * Each named shard's peer-region components (docs/regions.md).
   */
  ReadComponents: grpc.handleUnaryCall<_tally_shard_v1_ReadShardsRequest__Output, _tally_shard_v1_ReadComponentsResponse>;
  
  /**
   * Current totals of the named shards (unknown shards are 0).
   */
  ReadShards: grpc.handleUnaryCall<_tally_shard_v1_ReadShardsRequest__Output, _tally_shard_v1_ReadShardsResponse>;
  
  /**
   * ReadShards as a long-lived stream, answered by seq as ApplyStream is.
   */
  ReadShardsStream: grpc.handleBidiStreamingCall<_tally_shard_v1_ReadShardsFrame__Output, _tally_shard_v1_ReadShardsAnswer>;
  
  /**
   * The named shards' distinct-count sketches: each (empty bytes: none), or
   * with merge one sketch, their union, so the answer stays small however
   * many shards are named.
   */
  ReadSketches: grpc.handleUnaryCall<_tally_shard_v1_ReadSketchesRequest__Output, _tally_shard_v1_ReadSketchesResponse>;
  
  /**
   * Each named shard's sum over its window buckets starting in [from_ms, to_ms).
   */
  ReadWindows: grpc.handleUnaryCall<_tally_shard_v1_ReadWindowsRequest__Output, _tally_shard_v1_ReadShardsResponse>;
  
  /**
   * Recomputes shard totals from the log and compares them with memory (G8).
   */
  Reconcile: grpc.handleUnaryCall<_tally_shard_v1_ReconcileRequest__Output, _tally_shard_v1_ReconcileResponse>;
  
  /**
   * AppendEntries as one long-lived stream per pair (primary to follower):
   * each frame one AppendEntriesRequest (records, not columns) and a seq;
   * each answer the follower's position after that frame (it has fsync'd
   * up to last_lsn), or the error the unary call would have ended with.
   * Frames are handled in the order they arrive and answered in that order,
   * so a primary keeps several in flight, each continuing the one before
   * (log matching still checks every one). A stream that ends or breaks says
   * nothing about frames it left unanswered: the next stream's first answer
   * says where the follower's log ends.
   */
  ReplicateStream: grpc.handleBidiStreamingCall<_tally_shard_v1_ReplicateFrame__Output, _tally_shard_v1_ReplicateAnswer>;
  
  /**
   * Router to node: your role, epoch and peer. Refused for an older epoch or
   * a superseded configuration version (SetRoleRequest.config_version).
   */
  SetRole: grpc.handleUnaryCall<_tally_shard_v1_SetRoleRequest__Output, _tally_shard_v1_StatusResponse>;
  
  Status: grpc.handleUnaryCall<_tally_shard_v1_StatusRequest__Output, _tally_shard_v1_StatusResponse>;
  
  /**
   * Router to primary, for a backup: the node's whole state as a follower
   * refilled from it gets it, at one moment: its checkpoint as the chunks
   * an InstallSnapshot carries (same content and checksums, the last marked
   * done), then every entry past the checkpoint up to the log's end when
   * the call arrived, in blocks as AppendEntries carries them, then a piece
   * marked last. Nothing is changed on the node.
   */
  StreamSnapshot: grpc.handleServerStreamingCall<_tally_shard_v1_StreamSnapshotRequest__Output, _tally_shard_v1_SnapshotStreamPiece>;
  
}

export interface ShardNodeDefinition extends grpc.ServiceDefinition {
  AppendEntries: MethodDefinition<_tally_shard_v1_AppendEntriesRequest, _tally_shard_v1_AppendEntriesResponse, _tally_shard_v1_AppendEntriesRequest__Output, _tally_shard_v1_AppendEntriesResponse__Output>
  Apply: MethodDefinition<_tally_shard_v1_ApplyRequest, _tally_shard_v1_ApplyResponse, _tally_shard_v1_ApplyRequest__Output, _tally_shard_v1_ApplyResponse__Output>
  ApplyStream: MethodDefinition<_tally_shard_v1_ApplyFrame, _tally_shard_v1_ApplyAnswer, _tally_shard_v1_ApplyFrame__Output, _tally_shard_v1_ApplyAnswer__Output>
  ChangedShards: MethodDefinition<_tally_shard_v1_ChangedShardsRequest, _tally_shard_v1_ChangedShardsResponse, _tally_shard_v1_ChangedShardsRequest__Output, _tally_shard_v1_ChangedShardsResponse__Output>
  CheckMembers: MethodDefinition<_tally_shard_v1_CheckMembersRequest, _tally_shard_v1_CheckMembersResponse, _tally_shard_v1_CheckMembersRequest__Output, _tally_shard_v1_CheckMembersResponse__Output>
  InstallSnapshot: MethodDefinition<_tally_shard_v1_InstallSnapshotRequest, _tally_shard_v1_AppendEntriesResponse, _tally_shard_v1_InstallSnapshotRequest__Output, _tally_shard_v1_AppendEntriesResponse__Output>
  MemberCounts: MethodDefinition<_tally_shard_v1_ReadShardsRequest, _tally_shard_v1_MemberCountsResponse, _tally_shard_v1_ReadShardsRequest__Output, _tally_shard_v1_MemberCountsResponse__Output>
  ReadComponents: MethodDefinition<_tally_shard_v1_ReadShardsRequest, _tally_shard_v1_ReadComponentsResponse, _tally_shard_v1_ReadShardsRequest__Output, _tally_shard_v1_ReadComponentsResponse__Output>
  ReadShards: MethodDefinition<_tally_shard_v1_ReadShardsRequest, _tally_shard_v1_ReadShardsResponse, _tally_shard_v1_ReadShardsRequest__Output, _tally_shard_v1_ReadShardsResponse__Output>
  ReadShardsStream: MethodDefinition<_tally_shard_v1_ReadShardsFrame, _tally_shard_v1_ReadShardsAnswer, _tally_shard_v1_ReadShardsFrame__Output, _tally_shard_v1_ReadShardsAnswer__Output>
  ReadSketches: MethodDefinition<_tally_shard_v1_ReadSketchesRequest, _tally_shard_v1_ReadSketchesResponse, _tally_shard_v1_ReadSketchesRequest__Output, _tally_shard_v1_ReadSketchesResponse__Output>
  ReadWindows: MethodDefinition<_tally_shard_v1_ReadWindowsRequest, _tally_shard_v1_ReadShardsResponse, _tally_shard_v1_ReadWindowsRequest__Output, _tally_shard_v1_ReadShardsResponse__Output>
  Reconcile: MethodDefinition<_tally_shard_v1_ReconcileRequest, _tally_shard_v1_ReconcileResponse, _tally_shard_v1_ReconcileRequest__Output, _tally_shard_v1_ReconcileResponse__Output>
  ReplicateStream: MethodDefinition<_tally_shard_v1_ReplicateFrame, _tally_shard_v1_ReplicateAnswer, _tally_shard_v1_ReplicateFrame__Output, _tally_shard_v1_ReplicateAnswer__Output>
  SetRole: MethodDefinition<_tally_shard_v1_SetRoleRequest, _tally_shard_v1_StatusResponse, _tally_shard_v1_SetRoleRequest__Output, _tally_shard_v1_StatusResponse__Output>
  Status: MethodDefinition<_tally_shard_v1_StatusRequest, _tally_shard_v1_StatusResponse, _tally_shard_v1_StatusRequest__Output, _tally_shard_v1_StatusResponse__Output>
  StreamSnapshot: MethodDefinition<_tally_shard_v1_StreamSnapshotRequest, _tally_shard_v1_SnapshotStreamPiece, _tally_shard_v1_StreamSnapshotRequest__Output, _tally_shard_v1_SnapshotStreamPiece__Output>
}
