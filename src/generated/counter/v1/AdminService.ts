// Original file: proto/counter.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { AddPairRequest as _counter_v1_AddPairRequest, AddPairRequest__Output as _counter_v1_AddPairRequest__Output } from '../../counter/v1/AddPairRequest.ts';
import type { BackupChunk as _counter_v1_BackupChunk, BackupChunk__Output as _counter_v1_BackupChunk__Output } from '../../counter/v1/BackupChunk.ts';
import type { BackupPairRequest as _counter_v1_BackupPairRequest, BackupPairRequest__Output as _counter_v1_BackupPairRequest__Output } from '../../counter/v1/BackupPairRequest.ts';
import type { ClusterStatusRequest as _counter_v1_ClusterStatusRequest, ClusterStatusRequest__Output as _counter_v1_ClusterStatusRequest__Output } from '../../counter/v1/ClusterStatusRequest.ts';
import type { ClusterStatusResponse as _counter_v1_ClusterStatusResponse, ClusterStatusResponse__Output as _counter_v1_ClusterStatusResponse__Output } from '../../counter/v1/ClusterStatusResponse.ts';
import type { ConfigureRequest as _counter_v1_ConfigureRequest, ConfigureRequest__Output as _counter_v1_ConfigureRequest__Output } from '../../counter/v1/ConfigureRequest.ts';
import type { DeleteCounterRequest as _counter_v1_DeleteCounterRequest, DeleteCounterRequest__Output as _counter_v1_DeleteCounterRequest__Output } from '../../counter/v1/DeleteCounterRequest.ts';
import type { DeleteCounterResponse as _counter_v1_DeleteCounterResponse, DeleteCounterResponse__Output as _counter_v1_DeleteCounterResponse__Output } from '../../counter/v1/DeleteCounterResponse.ts';
import type { DescribeRequest as _counter_v1_DescribeRequest, DescribeRequest__Output as _counter_v1_DescribeRequest__Output } from '../../counter/v1/DescribeRequest.ts';
import type { DescribeResponse as _counter_v1_DescribeResponse, DescribeResponse__Output as _counter_v1_DescribeResponse__Output } from '../../counter/v1/DescribeResponse.ts';
import type { DrainPairRequest as _counter_v1_DrainPairRequest, DrainPairRequest__Output as _counter_v1_DrainPairRequest__Output } from '../../counter/v1/DrainPairRequest.ts';
import type { ExportDirectoryRequest as _counter_v1_ExportDirectoryRequest, ExportDirectoryRequest__Output as _counter_v1_ExportDirectoryRequest__Output } from '../../counter/v1/ExportDirectoryRequest.ts';
import type { ExportDirectoryResponse as _counter_v1_ExportDirectoryResponse, ExportDirectoryResponse__Output as _counter_v1_ExportDirectoryResponse__Output } from '../../counter/v1/ExportDirectoryResponse.ts';
import type { HotRequest as _counter_v1_HotRequest, HotRequest__Output as _counter_v1_HotRequest__Output } from '../../counter/v1/HotRequest.ts';
import type { HotResponse as _counter_v1_HotResponse, HotResponse__Output as _counter_v1_HotResponse__Output } from '../../counter/v1/HotResponse.ts';
import type { ListCountersRequest as _counter_v1_ListCountersRequest, ListCountersRequest__Output as _counter_v1_ListCountersRequest__Output } from '../../counter/v1/ListCountersRequest.ts';
import type { ListCountersResponse as _counter_v1_ListCountersResponse, ListCountersResponse__Output as _counter_v1_ListCountersResponse__Output } from '../../counter/v1/ListCountersResponse.ts';
import type { PairResponse as _counter_v1_PairResponse, PairResponse__Output as _counter_v1_PairResponse__Output } from '../../counter/v1/PairResponse.ts';
import type { RebuildRequest as _counter_v1_RebuildRequest, RebuildRequest__Output as _counter_v1_RebuildRequest__Output } from '../../counter/v1/RebuildRequest.ts';
import type { RebuildResponse as _counter_v1_RebuildResponse, RebuildResponse__Output as _counter_v1_RebuildResponse__Output } from '../../counter/v1/RebuildResponse.ts';
import type { ReconcileRequest as _counter_v1_ReconcileRequest, ReconcileRequest__Output as _counter_v1_ReconcileRequest__Output } from '../../counter/v1/ReconcileRequest.ts';
import type { ReconcileResponse as _counter_v1_ReconcileResponse, ReconcileResponse__Output as _counter_v1_ReconcileResponse__Output } from '../../counter/v1/ReconcileResponse.ts';
import type { ReplaceNodeRequest as _counter_v1_ReplaceNodeRequest, ReplaceNodeRequest__Output as _counter_v1_ReplaceNodeRequest__Output } from '../../counter/v1/ReplaceNodeRequest.ts';
import type { ReplaceNodeResponse as _counter_v1_ReplaceNodeResponse, ReplaceNodeResponse__Output as _counter_v1_ReplaceNodeResponse__Output } from '../../counter/v1/ReplaceNodeResponse.ts';
import type { SetShardsRequest as _counter_v1_SetShardsRequest, SetShardsRequest__Output as _counter_v1_SetShardsRequest__Output } from '../../counter/v1/SetShardsRequest.ts';
import type { SetShardsResponse as _counter_v1_SetShardsResponse, SetShardsResponse__Output as _counter_v1_SetShardsResponse__Output } from '../../counter/v1/SetShardsResponse.ts';

export interface AdminServiceClient extends grpc.Client {
  /**
   * Registers a new node pair online: new counters and growth place shards
   * on it from now on; nothing moves. Its two nodes must be running (empty);
   * the supervisor assigns their roles. FAILED_PRECONDITION when either
   * address is already a node of a pair.
   */
  AddPair(argument: _counter_v1_AddPairRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_PairResponse__Output>): grpc.ClientUnaryCall;
  AddPair(argument: _counter_v1_AddPairRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_PairResponse__Output>): grpc.ClientUnaryCall;
  AddPair(argument: _counter_v1_AddPairRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_PairResponse__Output>): grpc.ClientUnaryCall;
  AddPair(argument: _counter_v1_AddPairRequest, callback: grpc.requestCallback<_counter_v1_PairResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Registers a new node pair online: new counters and growth place shards
   * on it from now on; nothing moves. Its two nodes must be running (empty);
   * the supervisor assigns their roles. FAILED_PRECONDITION when either
   * address is already a node of a pair.
   */
  addPair(argument: _counter_v1_AddPairRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_PairResponse__Output>): grpc.ClientUnaryCall;
  addPair(argument: _counter_v1_AddPairRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_PairResponse__Output>): grpc.ClientUnaryCall;
  addPair(argument: _counter_v1_AddPairRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_PairResponse__Output>): grpc.ClientUnaryCall;
  addPair(argument: _counter_v1_AddPairRequest, callback: grpc.requestCallback<_counter_v1_PairResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * One pair's state for a backup (tally backup), from its primary: the
   * pieces its node streams (checkpoint chunks, then the entries past the
   * checkpoint), each as the node encoded it (opaque here; tally backup
   * verify and tally restore read them). They cover every increment the
   * pair acknowledged before the call.
   */
  BackupPair(argument: _counter_v1_BackupPairRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_counter_v1_BackupChunk__Output>;
  BackupPair(argument: _counter_v1_BackupPairRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_counter_v1_BackupChunk__Output>;
  /**
   * One pair's state for a backup (tally backup), from its primary: the
   * pieces its node streams (checkpoint chunks, then the entries past the
   * checkpoint), each as the node encoded it (opaque here; tally backup
   * verify and tally restore read them). They cover every increment the
   * pair acknowledged before the call.
   */
  backupPair(argument: _counter_v1_BackupPairRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_counter_v1_BackupChunk__Output>;
  backupPair(argument: _counter_v1_BackupPairRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_counter_v1_BackupChunk__Output>;
  
  ClusterStatus(argument: _counter_v1_ClusterStatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ClusterStatusResponse__Output>): grpc.ClientUnaryCall;
  ClusterStatus(argument: _counter_v1_ClusterStatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_ClusterStatusResponse__Output>): grpc.ClientUnaryCall;
  ClusterStatus(argument: _counter_v1_ClusterStatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ClusterStatusResponse__Output>): grpc.ClientUnaryCall;
  ClusterStatus(argument: _counter_v1_ClusterStatusRequest, callback: grpc.requestCallback<_counter_v1_ClusterStatusResponse__Output>): grpc.ClientUnaryCall;
  clusterStatus(argument: _counter_v1_ClusterStatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ClusterStatusResponse__Output>): grpc.ClientUnaryCall;
  clusterStatus(argument: _counter_v1_ClusterStatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_ClusterStatusResponse__Output>): grpc.ClientUnaryCall;
  clusterStatus(argument: _counter_v1_ClusterStatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ClusterStatusResponse__Output>): grpc.ClientUnaryCall;
  clusterStatus(argument: _counter_v1_ClusterStatusRequest, callback: grpc.requestCallback<_counter_v1_ClusterStatusResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Per-counter settings: heat-driven growth on or off, a total's window, a
   * membership counter's partitions, a time to live.
   */
  Configure(argument: _counter_v1_ConfigureRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Configure(argument: _counter_v1_ConfigureRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Configure(argument: _counter_v1_ConfigureRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Configure(argument: _counter_v1_ConfigureRequest, callback: grpc.requestCallback<_counter_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Per-counter settings: heat-driven growth on or off, a total's window, a
   * membership counter's partitions, a time to live.
   */
  configure(argument: _counter_v1_ConfigureRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  configure(argument: _counter_v1_ConfigureRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  configure(argument: _counter_v1_ConfigureRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  configure(argument: _counter_v1_ConfigureRequest, callback: grpc.requestCallback<_counter_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Deletes a counter: it leaves the directory at once (reads answer as for a
   * counter never written; the next write of the name creates a new counter
   * with new shards), and every node holding its shards frees their state.
   * NOT_FOUND for a name that does not exist.
   */
  DeleteCounter(argument: _counter_v1_DeleteCounterRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_DeleteCounterResponse__Output>): grpc.ClientUnaryCall;
  DeleteCounter(argument: _counter_v1_DeleteCounterRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_DeleteCounterResponse__Output>): grpc.ClientUnaryCall;
  DeleteCounter(argument: _counter_v1_DeleteCounterRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_DeleteCounterResponse__Output>): grpc.ClientUnaryCall;
  DeleteCounter(argument: _counter_v1_DeleteCounterRequest, callback: grpc.requestCallback<_counter_v1_DeleteCounterResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Deletes a counter: it leaves the directory at once (reads answer as for a
   * counter never written; the next write of the name creates a new counter
   * with new shards), and every node holding its shards frees their state.
   * NOT_FOUND for a name that does not exist.
   */
  deleteCounter(argument: _counter_v1_DeleteCounterRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_DeleteCounterResponse__Output>): grpc.ClientUnaryCall;
  deleteCounter(argument: _counter_v1_DeleteCounterRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_DeleteCounterResponse__Output>): grpc.ClientUnaryCall;
  deleteCounter(argument: _counter_v1_DeleteCounterRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_DeleteCounterResponse__Output>): grpc.ClientUnaryCall;
  deleteCounter(argument: _counter_v1_DeleteCounterRequest, callback: grpc.requestCallback<_counter_v1_DeleteCounterResponse__Output>): grpc.ClientUnaryCall;
  
  Describe(argument: _counter_v1_DescribeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _counter_v1_DescribeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _counter_v1_DescribeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  Describe(argument: _counter_v1_DescribeRequest, callback: grpc.requestCallback<_counter_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _counter_v1_DescribeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _counter_v1_DescribeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _counter_v1_DescribeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  describe(argument: _counter_v1_DescribeRequest, callback: grpc.requestCallback<_counter_v1_DescribeResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Stops (or, with undrain, resumes) placing new shards on a pair. Shards
   * already there stay and keep serving: draining moves nothing.
   */
  DrainPair(argument: _counter_v1_DrainPairRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_PairResponse__Output>): grpc.ClientUnaryCall;
  DrainPair(argument: _counter_v1_DrainPairRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_PairResponse__Output>): grpc.ClientUnaryCall;
  DrainPair(argument: _counter_v1_DrainPairRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_PairResponse__Output>): grpc.ClientUnaryCall;
  DrainPair(argument: _counter_v1_DrainPairRequest, callback: grpc.requestCallback<_counter_v1_PairResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Stops (or, with undrain, resumes) placing new shards on a pair. Shards
   * already there stay and keep serving: draining moves nothing.
   */
  drainPair(argument: _counter_v1_DrainPairRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_PairResponse__Output>): grpc.ClientUnaryCall;
  drainPair(argument: _counter_v1_DrainPairRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_PairResponse__Output>): grpc.ClientUnaryCall;
  drainPair(argument: _counter_v1_DrainPairRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_PairResponse__Output>): grpc.ClientUnaryCall;
  drainPair(argument: _counter_v1_DrainPairRequest, callback: grpc.requestCallback<_counter_v1_PairResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * The whole directory as one JSON document (tally directory export's
   * format), read online from this router's copy, in pieces (a directory
   * of many counters is larger than one message).
   */
  ExportDirectory(argument: _counter_v1_ExportDirectoryRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_counter_v1_ExportDirectoryResponse__Output>;
  ExportDirectory(argument: _counter_v1_ExportDirectoryRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_counter_v1_ExportDirectoryResponse__Output>;
  /**
   * The whole directory as one JSON document (tally directory export's
   * format), read online from this router's copy, in pieces (a directory
   * of many counters is larger than one message).
   */
  exportDirectory(argument: _counter_v1_ExportDirectoryRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_counter_v1_ExportDirectoryResponse__Output>;
  exportDirectory(argument: _counter_v1_ExportDirectoryRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_counter_v1_ExportDirectoryResponse__Output>;
  
  /**
   * The hottest counters now: rate, peak, shards, skew, per-shard rates.
   */
  Hot(argument: _counter_v1_HotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_HotResponse__Output>): grpc.ClientUnaryCall;
  Hot(argument: _counter_v1_HotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_HotResponse__Output>): grpc.ClientUnaryCall;
  Hot(argument: _counter_v1_HotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_HotResponse__Output>): grpc.ClientUnaryCall;
  Hot(argument: _counter_v1_HotRequest, callback: grpc.requestCallback<_counter_v1_HotResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The hottest counters now: rate, peak, shards, skew, per-shard rates.
   */
  hot(argument: _counter_v1_HotRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_HotResponse__Output>): grpc.ClientUnaryCall;
  hot(argument: _counter_v1_HotRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_HotResponse__Output>): grpc.ClientUnaryCall;
  hot(argument: _counter_v1_HotRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_HotResponse__Output>): grpc.ClientUnaryCall;
  hot(argument: _counter_v1_HotRequest, callback: grpc.requestCallback<_counter_v1_HotResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * The counters whose names start with prefix, in byte order of their UTF-8
   * names, one page at a time: pass each answer's next_page_token back until
   * it is empty. A scan sees every counter that existed for its whole length
   * exactly once, and no name twice, whatever is created or deleted meanwhile.
   */
  ListCounters(argument: _counter_v1_ListCountersRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ListCountersResponse__Output>): grpc.ClientUnaryCall;
  ListCounters(argument: _counter_v1_ListCountersRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_ListCountersResponse__Output>): grpc.ClientUnaryCall;
  ListCounters(argument: _counter_v1_ListCountersRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ListCountersResponse__Output>): grpc.ClientUnaryCall;
  ListCounters(argument: _counter_v1_ListCountersRequest, callback: grpc.requestCallback<_counter_v1_ListCountersResponse__Output>): grpc.ClientUnaryCall;
  /**
   * The counters whose names start with prefix, in byte order of their UTF-8
   * names, one page at a time: pass each answer's next_page_token back until
   * it is empty. A scan sees every counter that existed for its whole length
   * exactly once, and no name twice, whatever is created or deleted meanwhile.
   */
  listCounters(argument: _counter_v1_ListCountersRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ListCountersResponse__Output>): grpc.ClientUnaryCall;
  listCounters(argument: _counter_v1_ListCountersRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_ListCountersResponse__Output>): grpc.ClientUnaryCall;
  listCounters(argument: _counter_v1_ListCountersRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ListCountersResponse__Output>): grpc.ClientUnaryCall;
  listCounters(argument: _counter_v1_ListCountersRequest, callback: grpc.requestCallback<_counter_v1_ListCountersResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Membership counters: recomputes the count from the member bitmaps and
   * compares it with the stored count. Repairs only when repair is set.
   */
  Rebuild(argument: _counter_v1_RebuildRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_RebuildResponse__Output>): grpc.ClientUnaryCall;
  Rebuild(argument: _counter_v1_RebuildRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_RebuildResponse__Output>): grpc.ClientUnaryCall;
  Rebuild(argument: _counter_v1_RebuildRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_RebuildResponse__Output>): grpc.ClientUnaryCall;
  Rebuild(argument: _counter_v1_RebuildRequest, callback: grpc.requestCallback<_counter_v1_RebuildResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Membership counters: recomputes the count from the member bitmaps and
   * compares it with the stored count. Repairs only when repair is set.
   */
  rebuild(argument: _counter_v1_RebuildRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_RebuildResponse__Output>): grpc.ClientUnaryCall;
  rebuild(argument: _counter_v1_RebuildRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_RebuildResponse__Output>): grpc.ClientUnaryCall;
  rebuild(argument: _counter_v1_RebuildRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_RebuildResponse__Output>): grpc.ClientUnaryCall;
  rebuild(argument: _counter_v1_RebuildRequest, callback: grpc.requestCallback<_counter_v1_RebuildResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Recomputes shards from their logs and compares them with memory and with
   * the follower's copy (G8). Reports drift; never repairs.
   */
  Reconcile(argument: _counter_v1_ReconcileRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReconcileResponse__Output>): grpc.ClientUnaryCall;
  Reconcile(argument: _counter_v1_ReconcileRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_ReconcileResponse__Output>): grpc.ClientUnaryCall;
  Reconcile(argument: _counter_v1_ReconcileRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReconcileResponse__Output>): grpc.ClientUnaryCall;
  Reconcile(argument: _counter_v1_ReconcileRequest, callback: grpc.requestCallback<_counter_v1_ReconcileResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Recomputes shards from their logs and compares them with memory and with
   * the follower's copy (G8). Reports drift; never repairs.
   */
  reconcile(argument: _counter_v1_ReconcileRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReconcileResponse__Output>): grpc.ClientUnaryCall;
  reconcile(argument: _counter_v1_ReconcileRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_ReconcileResponse__Output>): grpc.ClientUnaryCall;
  reconcile(argument: _counter_v1_ReconcileRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReconcileResponse__Output>): grpc.ClientUnaryCall;
  reconcile(argument: _counter_v1_ReconcileRequest, callback: grpc.requestCallback<_counter_v1_ReconcileResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Moves a pair's follower slot from address to new_address (a lost disk or
   * machine): the new node is filled by snapshot install and the pair returns
   * to sync by itself. Only a follower slot can move; a lost primary is first
   * replaced by failover (its follower is promoted), then its slot moved.
   */
  ReplaceNode(argument: _counter_v1_ReplaceNodeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReplaceNodeResponse__Output>): grpc.ClientUnaryCall;
  ReplaceNode(argument: _counter_v1_ReplaceNodeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_ReplaceNodeResponse__Output>): grpc.ClientUnaryCall;
  ReplaceNode(argument: _counter_v1_ReplaceNodeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReplaceNodeResponse__Output>): grpc.ClientUnaryCall;
  ReplaceNode(argument: _counter_v1_ReplaceNodeRequest, callback: grpc.requestCallback<_counter_v1_ReplaceNodeResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Moves a pair's follower slot from address to new_address (a lost disk or
   * machine): the new node is filled by snapshot install and the pair returns
   * to sync by itself. Only a follower slot can move; a lost primary is first
   * replaced by failover (its follower is promoted), then its slot moved.
   */
  replaceNode(argument: _counter_v1_ReplaceNodeRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReplaceNodeResponse__Output>): grpc.ClientUnaryCall;
  replaceNode(argument: _counter_v1_ReplaceNodeRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_ReplaceNodeResponse__Output>): grpc.ClientUnaryCall;
  replaceNode(argument: _counter_v1_ReplaceNodeRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_ReplaceNodeResponse__Output>): grpc.ClientUnaryCall;
  replaceNode(argument: _counter_v1_ReplaceNodeRequest, callback: grpc.requestCallback<_counter_v1_ReplaceNodeResponse__Output>): grpc.ClientUnaryCall;
  
  /**
   * Grows a counter's shard set online. No data moves.
   */
  SetShards(argument: _counter_v1_SetShardsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_SetShardsResponse__Output>): grpc.ClientUnaryCall;
  SetShards(argument: _counter_v1_SetShardsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_SetShardsResponse__Output>): grpc.ClientUnaryCall;
  SetShards(argument: _counter_v1_SetShardsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_SetShardsResponse__Output>): grpc.ClientUnaryCall;
  SetShards(argument: _counter_v1_SetShardsRequest, callback: grpc.requestCallback<_counter_v1_SetShardsResponse__Output>): grpc.ClientUnaryCall;
  /**
   * Grows a counter's shard set online. No data moves.
   */
  setShards(argument: _counter_v1_SetShardsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_SetShardsResponse__Output>): grpc.ClientUnaryCall;
  setShards(argument: _counter_v1_SetShardsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_counter_v1_SetShardsResponse__Output>): grpc.ClientUnaryCall;
  setShards(argument: _counter_v1_SetShardsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_counter_v1_SetShardsResponse__Output>): grpc.ClientUnaryCall;
  setShards(argument: _counter_v1_SetShardsRequest, callback: grpc.requestCallback<_counter_v1_SetShardsResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface AdminServiceHandlers extends grpc.UntypedServiceImplementation {
  /**
   * Registers a new node pair online: new counters and growth place shards
   * on it from now on; nothing moves. Its two nodes must be running (empty);
   * the supervisor assigns their roles. FAILED_PRECONDITION when either
   * address is already a node of a pair.
   */
  AddPair: grpc.handleUnaryCall<_counter_v1_AddPairRequest__Output, _counter_v1_PairResponse>;
  
  /**
   * One pair's state for a backup (tally backup), from its primary: the
   * pieces its node streams (checkpoint chunks, then the entries past the
   * checkpoint), each as the node encoded it (opaque here; tally backup
   * verify and tally restore read them). They cover every increment the
   * pair acknowledged before the call.
   */
  BackupPair: grpc.handleServerStreamingCall<_counter_v1_BackupPairRequest__Output, _counter_v1_BackupChunk>;
  
  ClusterStatus: grpc.handleUnaryCall<_counter_v1_ClusterStatusRequest__Output, _counter_v1_ClusterStatusResponse>;
  
  /**
   * Per-counter settings: heat-driven growth on or off, a total's window, a
   * membership counter's partitions, a time to live.
   */
  Configure: grpc.handleUnaryCall<_counter_v1_ConfigureRequest__Output, _counter_v1_DescribeResponse>;
  
  /**
   * Deletes a counter: it leaves the directory at once (reads answer as for a
   * counter never written; the next write of the name creates a new counter
   * with new shards), and every node holding its shards frees their state.
   * NOT_FOUND for a name that does not exist.
   */
  DeleteCounter: grpc.handleUnaryCall<_counter_v1_DeleteCounterRequest__Output, _counter_v1_DeleteCounterResponse>;
  
  Describe: grpc.handleUnaryCall<_counter_v1_DescribeRequest__Output, _counter_v1_DescribeResponse>;
  
  /**
   * Stops (or, with undrain, resumes) placing new shards on a pair. Shards
   * already there stay and keep serving: draining moves nothing.
   */
  DrainPair: grpc.handleUnaryCall<_counter_v1_DrainPairRequest__Output, _counter_v1_PairResponse>;
  
  /**
   * The whole directory as one JSON document (tally directory export's
   * format), read online from this router's copy, in pieces (a directory
   * of many counters is larger than one message).
   */
  ExportDirectory: grpc.handleServerStreamingCall<_counter_v1_ExportDirectoryRequest__Output, _counter_v1_ExportDirectoryResponse>;
  
  /**
   * The hottest counters now: rate, peak, shards, skew, per-shard rates.
   */
  Hot: grpc.handleUnaryCall<_counter_v1_HotRequest__Output, _counter_v1_HotResponse>;
  
  /**
   * The counters whose names start with prefix, in byte order of their UTF-8
   * names, one page at a time: pass each answer's next_page_token back until
   * it is empty. A scan sees every counter that existed for its whole length
   * exactly once, and no name twice, whatever is created or deleted meanwhile.
   */
  ListCounters: grpc.handleUnaryCall<_counter_v1_ListCountersRequest__Output, _counter_v1_ListCountersResponse>;
  
  /**
   * Membership counters: recomputes the count from the member bitmaps and
   * compares it with the stored count. Repairs only when repair is set.
   */
  Rebuild: grpc.handleUnaryCall<_counter_v1_RebuildRequest__Output, _counter_v1_RebuildResponse>;
  
  /**
   * Recomputes shards from their logs and compares them with memory and with
   * the follower's copy (G8). Reports drift; never repairs.
   */
  Reconcile: grpc.handleUnaryCall<_counter_v1_ReconcileRequest__Output, _counter_v1_ReconcileResponse>;
  
  /**
   * Moves a pair's follower slot from address to new_address (a lost disk or
   * machine): the new node is filled by snapshot install and the pair returns
   * to sync by itself. Only a follower slot can move; a lost primary is first
   * replaced by failover (its follower is promoted), then its slot moved.
   */
  ReplaceNode: grpc.handleUnaryCall<_counter_v1_ReplaceNodeRequest__Output, _counter_v1_ReplaceNodeResponse>;
  
  /**
   * Grows a counter's shard set online. No data moves.
   */
  SetShards: grpc.handleUnaryCall<_counter_v1_SetShardsRequest__Output, _counter_v1_SetShardsResponse>;
  
}

export interface AdminServiceDefinition extends grpc.ServiceDefinition {
  AddPair: MethodDefinition<_counter_v1_AddPairRequest, _counter_v1_PairResponse, _counter_v1_AddPairRequest__Output, _counter_v1_PairResponse__Output>
  BackupPair: MethodDefinition<_counter_v1_BackupPairRequest, _counter_v1_BackupChunk, _counter_v1_BackupPairRequest__Output, _counter_v1_BackupChunk__Output>
  ClusterStatus: MethodDefinition<_counter_v1_ClusterStatusRequest, _counter_v1_ClusterStatusResponse, _counter_v1_ClusterStatusRequest__Output, _counter_v1_ClusterStatusResponse__Output>
  Configure: MethodDefinition<_counter_v1_ConfigureRequest, _counter_v1_DescribeResponse, _counter_v1_ConfigureRequest__Output, _counter_v1_DescribeResponse__Output>
  DeleteCounter: MethodDefinition<_counter_v1_DeleteCounterRequest, _counter_v1_DeleteCounterResponse, _counter_v1_DeleteCounterRequest__Output, _counter_v1_DeleteCounterResponse__Output>
  Describe: MethodDefinition<_counter_v1_DescribeRequest, _counter_v1_DescribeResponse, _counter_v1_DescribeRequest__Output, _counter_v1_DescribeResponse__Output>
  DrainPair: MethodDefinition<_counter_v1_DrainPairRequest, _counter_v1_PairResponse, _counter_v1_DrainPairRequest__Output, _counter_v1_PairResponse__Output>
  ExportDirectory: MethodDefinition<_counter_v1_ExportDirectoryRequest, _counter_v1_ExportDirectoryResponse, _counter_v1_ExportDirectoryRequest__Output, _counter_v1_ExportDirectoryResponse__Output>
  Hot: MethodDefinition<_counter_v1_HotRequest, _counter_v1_HotResponse, _counter_v1_HotRequest__Output, _counter_v1_HotResponse__Output>
  ListCounters: MethodDefinition<_counter_v1_ListCountersRequest, _counter_v1_ListCountersResponse, _counter_v1_ListCountersRequest__Output, _counter_v1_ListCountersResponse__Output>
  Rebuild: MethodDefinition<_counter_v1_RebuildRequest, _counter_v1_RebuildResponse, _counter_v1_RebuildRequest__Output, _counter_v1_RebuildResponse__Output>
  Reconcile: MethodDefinition<_counter_v1_ReconcileRequest, _counter_v1_ReconcileResponse, _counter_v1_ReconcileRequest__Output, _counter_v1_ReconcileResponse__Output>
  ReplaceNode: MethodDefinition<_counter_v1_ReplaceNodeRequest, _counter_v1_ReplaceNodeResponse, _counter_v1_ReplaceNodeRequest__Output, _counter_v1_ReplaceNodeResponse__Output>
  SetShards: MethodDefinition<_counter_v1_SetShardsRequest, _counter_v1_SetShardsResponse, _counter_v1_SetShardsRequest__Output, _counter_v1_SetShardsResponse__Output>
}
