import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { AddDistinctRequest as _counter_v1_AddDistinctRequest, AddDistinctRequest__Output as _counter_v1_AddDistinctRequest__Output } from './counter/v1/AddDistinctRequest.ts';
import type { AddDistinctResponse as _counter_v1_AddDistinctResponse, AddDistinctResponse__Output as _counter_v1_AddDistinctResponse__Output } from './counter/v1/AddDistinctResponse.ts';
import type { AddPairRequest as _counter_v1_AddPairRequest, AddPairRequest__Output as _counter_v1_AddPairRequest__Output } from './counter/v1/AddPairRequest.ts';
import type { AdminServiceClient as _counter_v1_AdminServiceClient, AdminServiceDefinition as _counter_v1_AdminServiceDefinition } from './counter/v1/AdminService.ts';
import type { BackupChunk as _counter_v1_BackupChunk, BackupChunk__Output as _counter_v1_BackupChunk__Output } from './counter/v1/BackupChunk.ts';
import type { BackupPairRequest as _counter_v1_BackupPairRequest, BackupPairRequest__Output as _counter_v1_BackupPairRequest__Output } from './counter/v1/BackupPairRequest.ts';
import type { ClearRequest as _counter_v1_ClearRequest, ClearRequest__Output as _counter_v1_ClearRequest__Output } from './counter/v1/ClearRequest.ts';
import type { ClearResponse as _counter_v1_ClearResponse, ClearResponse__Output as _counter_v1_ClearResponse__Output } from './counter/v1/ClearResponse.ts';
import type { ClusterStatusRequest as _counter_v1_ClusterStatusRequest, ClusterStatusRequest__Output as _counter_v1_ClusterStatusRequest__Output } from './counter/v1/ClusterStatusRequest.ts';
import type { ClusterStatusResponse as _counter_v1_ClusterStatusResponse, ClusterStatusResponse__Output as _counter_v1_ClusterStatusResponse__Output } from './counter/v1/ClusterStatusResponse.ts';
import type { ConfigureRequest as _counter_v1_ConfigureRequest, ConfigureRequest__Output as _counter_v1_ConfigureRequest__Output } from './counter/v1/ConfigureRequest.ts';
import type { CountDistinctRequest as _counter_v1_CountDistinctRequest, CountDistinctRequest__Output as _counter_v1_CountDistinctRequest__Output } from './counter/v1/CountDistinctRequest.ts';
import type { CountDistinctResponse as _counter_v1_CountDistinctResponse, CountDistinctResponse__Output as _counter_v1_CountDistinctResponse__Output } from './counter/v1/CountDistinctResponse.ts';
import type { CounterConfig as _counter_v1_CounterConfig, CounterConfig__Output as _counter_v1_CounterConfig__Output } from './counter/v1/CounterConfig.ts';
import type { CounterServiceClient as _counter_v1_CounterServiceClient, CounterServiceDefinition as _counter_v1_CounterServiceDefinition } from './counter/v1/CounterService.ts';
import type { DeleteCounterRequest as _counter_v1_DeleteCounterRequest, DeleteCounterRequest__Output as _counter_v1_DeleteCounterRequest__Output } from './counter/v1/DeleteCounterRequest.ts';
import type { DeleteCounterResponse as _counter_v1_DeleteCounterResponse, DeleteCounterResponse__Output as _counter_v1_DeleteCounterResponse__Output } from './counter/v1/DeleteCounterResponse.ts';
import type { DescribeRequest as _counter_v1_DescribeRequest, DescribeRequest__Output as _counter_v1_DescribeRequest__Output } from './counter/v1/DescribeRequest.ts';
import type { DescribeResponse as _counter_v1_DescribeResponse, DescribeResponse__Output as _counter_v1_DescribeResponse__Output } from './counter/v1/DescribeResponse.ts';
import type { DrainPairRequest as _counter_v1_DrainPairRequest, DrainPairRequest__Output as _counter_v1_DrainPairRequest__Output } from './counter/v1/DrainPairRequest.ts';
import type { ExportDirectoryRequest as _counter_v1_ExportDirectoryRequest, ExportDirectoryRequest__Output as _counter_v1_ExportDirectoryRequest__Output } from './counter/v1/ExportDirectoryRequest.ts';
import type { ExportDirectoryResponse as _counter_v1_ExportDirectoryResponse, ExportDirectoryResponse__Output as _counter_v1_ExportDirectoryResponse__Output } from './counter/v1/ExportDirectoryResponse.ts';
import type { HotCounter as _counter_v1_HotCounter, HotCounter__Output as _counter_v1_HotCounter__Output } from './counter/v1/HotCounter.ts';
import type { HotRequest as _counter_v1_HotRequest, HotRequest__Output as _counter_v1_HotRequest__Output } from './counter/v1/HotRequest.ts';
import type { HotResponse as _counter_v1_HotResponse, HotResponse__Output as _counter_v1_HotResponse__Output } from './counter/v1/HotResponse.ts';
import type { IncrementBatchRequest as _counter_v1_IncrementBatchRequest, IncrementBatchRequest__Output as _counter_v1_IncrementBatchRequest__Output } from './counter/v1/IncrementBatchRequest.ts';
import type { IncrementBatchResponse as _counter_v1_IncrementBatchResponse, IncrementBatchResponse__Output as _counter_v1_IncrementBatchResponse__Output } from './counter/v1/IncrementBatchResponse.ts';
import type { IncrementRequest as _counter_v1_IncrementRequest, IncrementRequest__Output as _counter_v1_IncrementRequest__Output } from './counter/v1/IncrementRequest.ts';
import type { IncrementResponse as _counter_v1_IncrementResponse, IncrementResponse__Output as _counter_v1_IncrementResponse__Output } from './counter/v1/IncrementResponse.ts';
import type { IncrementStreamError as _counter_v1_IncrementStreamError, IncrementStreamError__Output as _counter_v1_IncrementStreamError__Output } from './counter/v1/IncrementStreamError.ts';
import type { IncrementStreamRequest as _counter_v1_IncrementStreamRequest, IncrementStreamRequest__Output as _counter_v1_IncrementStreamRequest__Output } from './counter/v1/IncrementStreamRequest.ts';
import type { IncrementStreamResponse as _counter_v1_IncrementStreamResponse, IncrementStreamResponse__Output as _counter_v1_IncrementStreamResponse__Output } from './counter/v1/IncrementStreamResponse.ts';
import type { IsMemberRequest as _counter_v1_IsMemberRequest, IsMemberRequest__Output as _counter_v1_IsMemberRequest__Output } from './counter/v1/IsMemberRequest.ts';
import type { IsMemberResponse as _counter_v1_IsMemberResponse, IsMemberResponse__Output as _counter_v1_IsMemberResponse__Output } from './counter/v1/IsMemberResponse.ts';
import type { ListCountersRequest as _counter_v1_ListCountersRequest, ListCountersRequest__Output as _counter_v1_ListCountersRequest__Output } from './counter/v1/ListCountersRequest.ts';
import type { ListCountersResponse as _counter_v1_ListCountersResponse, ListCountersResponse__Output as _counter_v1_ListCountersResponse__Output } from './counter/v1/ListCountersResponse.ts';
import type { ListedCounter as _counter_v1_ListedCounter, ListedCounter__Output as _counter_v1_ListedCounter__Output } from './counter/v1/ListedCounter.ts';
import type { NodeInfo as _counter_v1_NodeInfo, NodeInfo__Output as _counter_v1_NodeInfo__Output } from './counter/v1/NodeInfo.ts';
import type { PairReconcile as _counter_v1_PairReconcile, PairReconcile__Output as _counter_v1_PairReconcile__Output } from './counter/v1/PairReconcile.ts';
import type { PairResponse as _counter_v1_PairResponse, PairResponse__Output as _counter_v1_PairResponse__Output } from './counter/v1/PairResponse.ts';
import type { PairStatus as _counter_v1_PairStatus, PairStatus__Output as _counter_v1_PairStatus__Output } from './counter/v1/PairStatus.ts';
import type { PartitionCheck as _counter_v1_PartitionCheck, PartitionCheck__Output as _counter_v1_PartitionCheck__Output } from './counter/v1/PartitionCheck.ts';
import type { PeerRegionStatus as _counter_v1_PeerRegionStatus, PeerRegionStatus__Output as _counter_v1_PeerRegionStatus__Output } from './counter/v1/PeerRegionStatus.ts';
import type { ReadManyRequest as _counter_v1_ReadManyRequest, ReadManyRequest__Output as _counter_v1_ReadManyRequest__Output } from './counter/v1/ReadManyRequest.ts';
import type { ReadManyResponse as _counter_v1_ReadManyResponse, ReadManyResponse__Output as _counter_v1_ReadManyResponse__Output } from './counter/v1/ReadManyResponse.ts';
import type { ReadRequest as _counter_v1_ReadRequest, ReadRequest__Output as _counter_v1_ReadRequest__Output } from './counter/v1/ReadRequest.ts';
import type { ReadResponse as _counter_v1_ReadResponse, ReadResponse__Output as _counter_v1_ReadResponse__Output } from './counter/v1/ReadResponse.ts';
import type { ReadWindowRequest as _counter_v1_ReadWindowRequest, ReadWindowRequest__Output as _counter_v1_ReadWindowRequest__Output } from './counter/v1/ReadWindowRequest.ts';
import type { ReadWindowResponse as _counter_v1_ReadWindowResponse, ReadWindowResponse__Output as _counter_v1_ReadWindowResponse__Output } from './counter/v1/ReadWindowResponse.ts';
import type { RebuildRequest as _counter_v1_RebuildRequest, RebuildRequest__Output as _counter_v1_RebuildRequest__Output } from './counter/v1/RebuildRequest.ts';
import type { RebuildResponse as _counter_v1_RebuildResponse, RebuildResponse__Output as _counter_v1_RebuildResponse__Output } from './counter/v1/RebuildResponse.ts';
import type { ReconcileRequest as _counter_v1_ReconcileRequest, ReconcileRequest__Output as _counter_v1_ReconcileRequest__Output } from './counter/v1/ReconcileRequest.ts';
import type { ReconcileResponse as _counter_v1_ReconcileResponse, ReconcileResponse__Output as _counter_v1_ReconcileResponse__Output } from './counter/v1/ReconcileResponse.ts';
import type { RegionPart as _counter_v1_RegionPart, RegionPart__Output as _counter_v1_RegionPart__Output } from './counter/v1/RegionPart.ts';
import type { ReplaceNodeRequest as _counter_v1_ReplaceNodeRequest, ReplaceNodeRequest__Output as _counter_v1_ReplaceNodeRequest__Output } from './counter/v1/ReplaceNodeRequest.ts';
import type { ReplaceNodeResponse as _counter_v1_ReplaceNodeResponse, ReplaceNodeResponse__Output as _counter_v1_ReplaceNodeResponse__Output } from './counter/v1/ReplaceNodeResponse.ts';
import type { SetMemberRequest as _counter_v1_SetMemberRequest, SetMemberRequest__Output as _counter_v1_SetMemberRequest__Output } from './counter/v1/SetMemberRequest.ts';
import type { SetMemberResponse as _counter_v1_SetMemberResponse, SetMemberResponse__Output as _counter_v1_SetMemberResponse__Output } from './counter/v1/SetMemberResponse.ts';
import type { SetShardsRequest as _counter_v1_SetShardsRequest, SetShardsRequest__Output as _counter_v1_SetShardsRequest__Output } from './counter/v1/SetShardsRequest.ts';
import type { SetShardsResponse as _counter_v1_SetShardsResponse, SetShardsResponse__Output as _counter_v1_SetShardsResponse__Output } from './counter/v1/SetShardsResponse.ts';
import type { ShardDrift as _counter_v1_ShardDrift, ShardDrift__Output as _counter_v1_ShardDrift__Output } from './counter/v1/ShardDrift.ts';
import type { ShardPlacement as _counter_v1_ShardPlacement, ShardPlacement__Output as _counter_v1_ShardPlacement__Output } from './counter/v1/ShardPlacement.ts';
import type { TtlSetting as _counter_v1_TtlSetting, TtlSetting__Output as _counter_v1_TtlSetting__Output } from './counter/v1/TtlSetting.ts';
import type { WindowSettings as _counter_v1_WindowSettings, WindowSettings__Output as _counter_v1_WindowSettings__Output } from './counter/v1/WindowSettings.ts';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  counter: {
    v1: {
      AddDistinctRequest: MessageTypeDefinition<_counter_v1_AddDistinctRequest, _counter_v1_AddDistinctRequest__Output>
      AddDistinctResponse: MessageTypeDefinition<_counter_v1_AddDistinctResponse, _counter_v1_AddDistinctResponse__Output>
      AddPairRequest: MessageTypeDefinition<_counter_v1_AddPairRequest, _counter_v1_AddPairRequest__Output>
      AdminService: SubtypeConstructor<typeof grpc.Client, _counter_v1_AdminServiceClient> & { service: _counter_v1_AdminServiceDefinition }
      AutoscaleMode: EnumTypeDefinition
      BackupChunk: MessageTypeDefinition<_counter_v1_BackupChunk, _counter_v1_BackupChunk__Output>
      BackupPairRequest: MessageTypeDefinition<_counter_v1_BackupPairRequest, _counter_v1_BackupPairRequest__Output>
      ClearRequest: MessageTypeDefinition<_counter_v1_ClearRequest, _counter_v1_ClearRequest__Output>
      ClearResponse: MessageTypeDefinition<_counter_v1_ClearResponse, _counter_v1_ClearResponse__Output>
      ClusterStatusRequest: MessageTypeDefinition<_counter_v1_ClusterStatusRequest, _counter_v1_ClusterStatusRequest__Output>
      ClusterStatusResponse: MessageTypeDefinition<_counter_v1_ClusterStatusResponse, _counter_v1_ClusterStatusResponse__Output>
      ConfigureRequest: MessageTypeDefinition<_counter_v1_ConfigureRequest, _counter_v1_ConfigureRequest__Output>
      Consistency: EnumTypeDefinition
      CountDistinctRequest: MessageTypeDefinition<_counter_v1_CountDistinctRequest, _counter_v1_CountDistinctRequest__Output>
      CountDistinctResponse: MessageTypeDefinition<_counter_v1_CountDistinctResponse, _counter_v1_CountDistinctResponse__Output>
      CounterConfig: MessageTypeDefinition<_counter_v1_CounterConfig, _counter_v1_CounterConfig__Output>
      CounterService: SubtypeConstructor<typeof grpc.Client, _counter_v1_CounterServiceClient> & { service: _counter_v1_CounterServiceDefinition }
      DeleteCounterRequest: MessageTypeDefinition<_counter_v1_DeleteCounterRequest, _counter_v1_DeleteCounterRequest__Output>
      DeleteCounterResponse: MessageTypeDefinition<_counter_v1_DeleteCounterResponse, _counter_v1_DeleteCounterResponse__Output>
      DescribeRequest: MessageTypeDefinition<_counter_v1_DescribeRequest, _counter_v1_DescribeRequest__Output>
      DescribeResponse: MessageTypeDefinition<_counter_v1_DescribeResponse, _counter_v1_DescribeResponse__Output>
      DrainPairRequest: MessageTypeDefinition<_counter_v1_DrainPairRequest, _counter_v1_DrainPairRequest__Output>
      ExportDirectoryRequest: MessageTypeDefinition<_counter_v1_ExportDirectoryRequest, _counter_v1_ExportDirectoryRequest__Output>
      ExportDirectoryResponse: MessageTypeDefinition<_counter_v1_ExportDirectoryResponse, _counter_v1_ExportDirectoryResponse__Output>
      HotCounter: MessageTypeDefinition<_counter_v1_HotCounter, _counter_v1_HotCounter__Output>
      HotRequest: MessageTypeDefinition<_counter_v1_HotRequest, _counter_v1_HotRequest__Output>
      HotResponse: MessageTypeDefinition<_counter_v1_HotResponse, _counter_v1_HotResponse__Output>
      IncrementBatchRequest: MessageTypeDefinition<_counter_v1_IncrementBatchRequest, _counter_v1_IncrementBatchRequest__Output>
      IncrementBatchResponse: MessageTypeDefinition<_counter_v1_IncrementBatchResponse, _counter_v1_IncrementBatchResponse__Output>
      IncrementRequest: MessageTypeDefinition<_counter_v1_IncrementRequest, _counter_v1_IncrementRequest__Output>
      IncrementResponse: MessageTypeDefinition<_counter_v1_IncrementResponse, _counter_v1_IncrementResponse__Output>
      IncrementStreamError: MessageTypeDefinition<_counter_v1_IncrementStreamError, _counter_v1_IncrementStreamError__Output>
      IncrementStreamRequest: MessageTypeDefinition<_counter_v1_IncrementStreamRequest, _counter_v1_IncrementStreamRequest__Output>
      IncrementStreamResponse: MessageTypeDefinition<_counter_v1_IncrementStreamResponse, _counter_v1_IncrementStreamResponse__Output>
      IsMemberRequest: MessageTypeDefinition<_counter_v1_IsMemberRequest, _counter_v1_IsMemberRequest__Output>
      IsMemberResponse: MessageTypeDefinition<_counter_v1_IsMemberResponse, _counter_v1_IsMemberResponse__Output>
      ListCountersRequest: MessageTypeDefinition<_counter_v1_ListCountersRequest, _counter_v1_ListCountersRequest__Output>
      ListCountersResponse: MessageTypeDefinition<_counter_v1_ListCountersResponse, _counter_v1_ListCountersResponse__Output>
      ListedCounter: MessageTypeDefinition<_counter_v1_ListedCounter, _counter_v1_ListedCounter__Output>
      NodeInfo: MessageTypeDefinition<_counter_v1_NodeInfo, _counter_v1_NodeInfo__Output>
      PairReconcile: MessageTypeDefinition<_counter_v1_PairReconcile, _counter_v1_PairReconcile__Output>
      PairResponse: MessageTypeDefinition<_counter_v1_PairResponse, _counter_v1_PairResponse__Output>
      PairStatus: MessageTypeDefinition<_counter_v1_PairStatus, _counter_v1_PairStatus__Output>
      PartitionCheck: MessageTypeDefinition<_counter_v1_PartitionCheck, _counter_v1_PartitionCheck__Output>
      PeerRegionStatus: MessageTypeDefinition<_counter_v1_PeerRegionStatus, _counter_v1_PeerRegionStatus__Output>
      ReadManyRequest: MessageTypeDefinition<_counter_v1_ReadManyRequest, _counter_v1_ReadManyRequest__Output>
      ReadManyResponse: MessageTypeDefinition<_counter_v1_ReadManyResponse, _counter_v1_ReadManyResponse__Output>
      ReadRequest: MessageTypeDefinition<_counter_v1_ReadRequest, _counter_v1_ReadRequest__Output>
      ReadResponse: MessageTypeDefinition<_counter_v1_ReadResponse, _counter_v1_ReadResponse__Output>
      ReadWindowRequest: MessageTypeDefinition<_counter_v1_ReadWindowRequest, _counter_v1_ReadWindowRequest__Output>
      ReadWindowResponse: MessageTypeDefinition<_counter_v1_ReadWindowResponse, _counter_v1_ReadWindowResponse__Output>
      RebuildRequest: MessageTypeDefinition<_counter_v1_RebuildRequest, _counter_v1_RebuildRequest__Output>
      RebuildResponse: MessageTypeDefinition<_counter_v1_RebuildResponse, _counter_v1_RebuildResponse__Output>
      ReconcileRequest: MessageTypeDefinition<_counter_v1_ReconcileRequest, _counter_v1_ReconcileRequest__Output>
      ReconcileResponse: MessageTypeDefinition<_counter_v1_ReconcileResponse, _counter_v1_ReconcileResponse__Output>
      RegionPart: MessageTypeDefinition<_counter_v1_RegionPart, _counter_v1_RegionPart__Output>
      ReplaceNodeRequest: MessageTypeDefinition<_counter_v1_ReplaceNodeRequest, _counter_v1_ReplaceNodeRequest__Output>
      ReplaceNodeResponse: MessageTypeDefinition<_counter_v1_ReplaceNodeResponse, _counter_v1_ReplaceNodeResponse__Output>
      Scope: EnumTypeDefinition
      SetMemberRequest: MessageTypeDefinition<_counter_v1_SetMemberRequest, _counter_v1_SetMemberRequest__Output>
      SetMemberResponse: MessageTypeDefinition<_counter_v1_SetMemberResponse, _counter_v1_SetMemberResponse__Output>
      SetShardsRequest: MessageTypeDefinition<_counter_v1_SetShardsRequest, _counter_v1_SetShardsRequest__Output>
      SetShardsResponse: MessageTypeDefinition<_counter_v1_SetShardsResponse, _counter_v1_SetShardsResponse__Output>
      ShardDrift: MessageTypeDefinition<_counter_v1_ShardDrift, _counter_v1_ShardDrift__Output>
      ShardPlacement: MessageTypeDefinition<_counter_v1_ShardPlacement, _counter_v1_ShardPlacement__Output>
      TtlSetting: MessageTypeDefinition<_counter_v1_TtlSetting, _counter_v1_TtlSetting__Output>
      WindowSettings: MessageTypeDefinition<_counter_v1_WindowSettings, _counter_v1_WindowSettings__Output>
    }
  }
}

