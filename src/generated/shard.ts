import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { AppendEntriesRequest as _tally_shard_v1_AppendEntriesRequest, AppendEntriesRequest__Output as _tally_shard_v1_AppendEntriesRequest__Output } from './tally/shard/v1/AppendEntriesRequest.ts';
import type { AppendEntriesResponse as _tally_shard_v1_AppendEntriesResponse, AppendEntriesResponse__Output as _tally_shard_v1_AppendEntriesResponse__Output } from './tally/shard/v1/AppendEntriesResponse.ts';
import type { ApplyAnswer as _tally_shard_v1_ApplyAnswer, ApplyAnswer__Output as _tally_shard_v1_ApplyAnswer__Output } from './tally/shard/v1/ApplyAnswer.ts';
import type { ApplyFrame as _tally_shard_v1_ApplyFrame, ApplyFrame__Output as _tally_shard_v1_ApplyFrame__Output } from './tally/shard/v1/ApplyFrame.ts';
import type { ApplyGroup as _tally_shard_v1_ApplyGroup, ApplyGroup__Output as _tally_shard_v1_ApplyGroup__Output } from './tally/shard/v1/ApplyGroup.ts';
import type { ApplyItem as _tally_shard_v1_ApplyItem, ApplyItem__Output as _tally_shard_v1_ApplyItem__Output } from './tally/shard/v1/ApplyItem.ts';
import type { ApplyRequest as _tally_shard_v1_ApplyRequest, ApplyRequest__Output as _tally_shard_v1_ApplyRequest__Output } from './tally/shard/v1/ApplyRequest.ts';
import type { ApplyResponse as _tally_shard_v1_ApplyResponse, ApplyResponse__Output as _tally_shard_v1_ApplyResponse__Output } from './tally/shard/v1/ApplyResponse.ts';
import type { ChangedShardsRequest as _tally_shard_v1_ChangedShardsRequest, ChangedShardsRequest__Output as _tally_shard_v1_ChangedShardsRequest__Output } from './tally/shard/v1/ChangedShardsRequest.ts';
import type { ChangedShardsResponse as _tally_shard_v1_ChangedShardsResponse, ChangedShardsResponse__Output as _tally_shard_v1_ChangedShardsResponse__Output } from './tally/shard/v1/ChangedShardsResponse.ts';
import type { CheckMembersRequest as _tally_shard_v1_CheckMembersRequest, CheckMembersRequest__Output as _tally_shard_v1_CheckMembersRequest__Output } from './tally/shard/v1/CheckMembersRequest.ts';
import type { CheckMembersResponse as _tally_shard_v1_CheckMembersResponse, CheckMembersResponse__Output as _tally_shard_v1_CheckMembersResponse__Output } from './tally/shard/v1/CheckMembersResponse.ts';
import type { FrameError as _tally_shard_v1_FrameError, FrameError__Output as _tally_shard_v1_FrameError__Output } from './tally/shard/v1/FrameError.ts';
import type { GroupResult as _tally_shard_v1_GroupResult, GroupResult__Output as _tally_shard_v1_GroupResult__Output } from './tally/shard/v1/GroupResult.ts';
import type { InstallSnapshotRequest as _tally_shard_v1_InstallSnapshotRequest, InstallSnapshotRequest__Output as _tally_shard_v1_InstallSnapshotRequest__Output } from './tally/shard/v1/InstallSnapshotRequest.ts';
import type { LogEntryMsg as _tally_shard_v1_LogEntryMsg, LogEntryMsg__Output as _tally_shard_v1_LogEntryMsg__Output } from './tally/shard/v1/LogEntryMsg.ts';
import type { MemberCountsResponse as _tally_shard_v1_MemberCountsResponse, MemberCountsResponse__Output as _tally_shard_v1_MemberCountsResponse__Output } from './tally/shard/v1/MemberCountsResponse.ts';
import type { PackedIncrements as _tally_shard_v1_PackedIncrements, PackedIncrements__Output as _tally_shard_v1_PackedIncrements__Output } from './tally/shard/v1/PackedIncrements.ts';
import type { ProtocolVersion as _tally_shard_v1_ProtocolVersion, ProtocolVersion__Output as _tally_shard_v1_ProtocolVersion__Output } from './tally/shard/v1/ProtocolVersion.ts';
import type { ReadComponentsResponse as _tally_shard_v1_ReadComponentsResponse, ReadComponentsResponse__Output as _tally_shard_v1_ReadComponentsResponse__Output } from './tally/shard/v1/ReadComponentsResponse.ts';
import type { ReadShardsAnswer as _tally_shard_v1_ReadShardsAnswer, ReadShardsAnswer__Output as _tally_shard_v1_ReadShardsAnswer__Output } from './tally/shard/v1/ReadShardsAnswer.ts';
import type { ReadShardsFrame as _tally_shard_v1_ReadShardsFrame, ReadShardsFrame__Output as _tally_shard_v1_ReadShardsFrame__Output } from './tally/shard/v1/ReadShardsFrame.ts';
import type { ReadShardsRequest as _tally_shard_v1_ReadShardsRequest, ReadShardsRequest__Output as _tally_shard_v1_ReadShardsRequest__Output } from './tally/shard/v1/ReadShardsRequest.ts';
import type { ReadShardsResponse as _tally_shard_v1_ReadShardsResponse, ReadShardsResponse__Output as _tally_shard_v1_ReadShardsResponse__Output } from './tally/shard/v1/ReadShardsResponse.ts';
import type { ReadSketchesRequest as _tally_shard_v1_ReadSketchesRequest, ReadSketchesRequest__Output as _tally_shard_v1_ReadSketchesRequest__Output } from './tally/shard/v1/ReadSketchesRequest.ts';
import type { ReadSketchesResponse as _tally_shard_v1_ReadSketchesResponse, ReadSketchesResponse__Output as _tally_shard_v1_ReadSketchesResponse__Output } from './tally/shard/v1/ReadSketchesResponse.ts';
import type { ReadWindowsRequest as _tally_shard_v1_ReadWindowsRequest, ReadWindowsRequest__Output as _tally_shard_v1_ReadWindowsRequest__Output } from './tally/shard/v1/ReadWindowsRequest.ts';
import type { ReconcileRequest as _tally_shard_v1_ReconcileRequest, ReconcileRequest__Output as _tally_shard_v1_ReconcileRequest__Output } from './tally/shard/v1/ReconcileRequest.ts';
import type { ReconcileResponse as _tally_shard_v1_ReconcileResponse, ReconcileResponse__Output as _tally_shard_v1_ReconcileResponse__Output } from './tally/shard/v1/ReconcileResponse.ts';
import type { ReplicateAnswer as _tally_shard_v1_ReplicateAnswer, ReplicateAnswer__Output as _tally_shard_v1_ReplicateAnswer__Output } from './tally/shard/v1/ReplicateAnswer.ts';
import type { ReplicateFrame as _tally_shard_v1_ReplicateFrame, ReplicateFrame__Output as _tally_shard_v1_ReplicateFrame__Output } from './tally/shard/v1/ReplicateFrame.ts';
import type { SetRoleRequest as _tally_shard_v1_SetRoleRequest, SetRoleRequest__Output as _tally_shard_v1_SetRoleRequest__Output } from './tally/shard/v1/SetRoleRequest.ts';
import type { ShardCheck as _tally_shard_v1_ShardCheck, ShardCheck__Output as _tally_shard_v1_ShardCheck__Output } from './tally/shard/v1/ShardCheck.ts';
import type { ShardNodeClient as _tally_shard_v1_ShardNodeClient, ShardNodeDefinition as _tally_shard_v1_ShardNodeDefinition } from './tally/shard/v1/ShardNode.ts';
import type { SnapshotPart as _tally_shard_v1_SnapshotPart, SnapshotPart__Output as _tally_shard_v1_SnapshotPart__Output } from './tally/shard/v1/SnapshotPart.ts';
import type { SnapshotShard as _tally_shard_v1_SnapshotShard, SnapshotShard__Output as _tally_shard_v1_SnapshotShard__Output } from './tally/shard/v1/SnapshotShard.ts';
import type { SnapshotStreamPiece as _tally_shard_v1_SnapshotStreamPiece, SnapshotStreamPiece__Output as _tally_shard_v1_SnapshotStreamPiece__Output } from './tally/shard/v1/SnapshotStreamPiece.ts';
import type { StatusRequest as _tally_shard_v1_StatusRequest, StatusRequest__Output as _tally_shard_v1_StatusRequest__Output } from './tally/shard/v1/StatusRequest.ts';
import type { StatusResponse as _tally_shard_v1_StatusResponse, StatusResponse__Output as _tally_shard_v1_StatusResponse__Output } from './tally/shard/v1/StatusResponse.ts';
import type { StreamSnapshotRequest as _tally_shard_v1_StreamSnapshotRequest, StreamSnapshotRequest__Output as _tally_shard_v1_StreamSnapshotRequest__Output } from './tally/shard/v1/StreamSnapshotRequest.ts';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  tally: {
    shard: {
      v1: {
        AppendEntriesRequest: MessageTypeDefinition<_tally_shard_v1_AppendEntriesRequest, _tally_shard_v1_AppendEntriesRequest__Output>
        AppendEntriesResponse: MessageTypeDefinition<_tally_shard_v1_AppendEntriesResponse, _tally_shard_v1_AppendEntriesResponse__Output>
        ApplyAnswer: MessageTypeDefinition<_tally_shard_v1_ApplyAnswer, _tally_shard_v1_ApplyAnswer__Output>
        ApplyFrame: MessageTypeDefinition<_tally_shard_v1_ApplyFrame, _tally_shard_v1_ApplyFrame__Output>
        ApplyGroup: MessageTypeDefinition<_tally_shard_v1_ApplyGroup, _tally_shard_v1_ApplyGroup__Output>
        ApplyItem: MessageTypeDefinition<_tally_shard_v1_ApplyItem, _tally_shard_v1_ApplyItem__Output>
        ApplyOp: EnumTypeDefinition
        ApplyRequest: MessageTypeDefinition<_tally_shard_v1_ApplyRequest, _tally_shard_v1_ApplyRequest__Output>
        ApplyResponse: MessageTypeDefinition<_tally_shard_v1_ApplyResponse, _tally_shard_v1_ApplyResponse__Output>
        ChangedShardsRequest: MessageTypeDefinition<_tally_shard_v1_ChangedShardsRequest, _tally_shard_v1_ChangedShardsRequest__Output>
        ChangedShardsResponse: MessageTypeDefinition<_tally_shard_v1_ChangedShardsResponse, _tally_shard_v1_ChangedShardsResponse__Output>
        CheckMembersRequest: MessageTypeDefinition<_tally_shard_v1_CheckMembersRequest, _tally_shard_v1_CheckMembersRequest__Output>
        CheckMembersResponse: MessageTypeDefinition<_tally_shard_v1_CheckMembersResponse, _tally_shard_v1_CheckMembersResponse__Output>
        FrameError: MessageTypeDefinition<_tally_shard_v1_FrameError, _tally_shard_v1_FrameError__Output>
        GroupResult: MessageTypeDefinition<_tally_shard_v1_GroupResult, _tally_shard_v1_GroupResult__Output>
        InstallSnapshotRequest: MessageTypeDefinition<_tally_shard_v1_InstallSnapshotRequest, _tally_shard_v1_InstallSnapshotRequest__Output>
        LogEntryMsg: MessageTypeDefinition<_tally_shard_v1_LogEntryMsg, _tally_shard_v1_LogEntryMsg__Output>
        MemberCountsResponse: MessageTypeDefinition<_tally_shard_v1_MemberCountsResponse, _tally_shard_v1_MemberCountsResponse__Output>
        PackedIncrements: MessageTypeDefinition<_tally_shard_v1_PackedIncrements, _tally_shard_v1_PackedIncrements__Output>
        ProtocolVersion: MessageTypeDefinition<_tally_shard_v1_ProtocolVersion, _tally_shard_v1_ProtocolVersion__Output>
        ReadComponentsResponse: MessageTypeDefinition<_tally_shard_v1_ReadComponentsResponse, _tally_shard_v1_ReadComponentsResponse__Output>
        ReadShardsAnswer: MessageTypeDefinition<_tally_shard_v1_ReadShardsAnswer, _tally_shard_v1_ReadShardsAnswer__Output>
        ReadShardsFrame: MessageTypeDefinition<_tally_shard_v1_ReadShardsFrame, _tally_shard_v1_ReadShardsFrame__Output>
        ReadShardsRequest: MessageTypeDefinition<_tally_shard_v1_ReadShardsRequest, _tally_shard_v1_ReadShardsRequest__Output>
        ReadShardsResponse: MessageTypeDefinition<_tally_shard_v1_ReadShardsResponse, _tally_shard_v1_ReadShardsResponse__Output>
        ReadSketchesRequest: MessageTypeDefinition<_tally_shard_v1_ReadSketchesRequest, _tally_shard_v1_ReadSketchesRequest__Output>
        ReadSketchesResponse: MessageTypeDefinition<_tally_shard_v1_ReadSketchesResponse, _tally_shard_v1_ReadSketchesResponse__Output>
        ReadWindowsRequest: MessageTypeDefinition<_tally_shard_v1_ReadWindowsRequest, _tally_shard_v1_ReadWindowsRequest__Output>
        ReconcileRequest: MessageTypeDefinition<_tally_shard_v1_ReconcileRequest, _tally_shard_v1_ReconcileRequest__Output>
        ReconcileResponse: MessageTypeDefinition<_tally_shard_v1_ReconcileResponse, _tally_shard_v1_ReconcileResponse__Output>
        ReplicateAnswer: MessageTypeDefinition<_tally_shard_v1_ReplicateAnswer, _tally_shard_v1_ReplicateAnswer__Output>
        ReplicateFrame: MessageTypeDefinition<_tally_shard_v1_ReplicateFrame, _tally_shard_v1_ReplicateFrame__Output>
        SetRoleRequest: MessageTypeDefinition<_tally_shard_v1_SetRoleRequest, _tally_shard_v1_SetRoleRequest__Output>
        ShardCheck: MessageTypeDefinition<_tally_shard_v1_ShardCheck, _tally_shard_v1_ShardCheck__Output>
        ShardNode: SubtypeConstructor<typeof grpc.Client, _tally_shard_v1_ShardNodeClient> & { service: _tally_shard_v1_ShardNodeDefinition }
        SnapshotPart: MessageTypeDefinition<_tally_shard_v1_SnapshotPart, _tally_shard_v1_SnapshotPart__Output>
        SnapshotShard: MessageTypeDefinition<_tally_shard_v1_SnapshotShard, _tally_shard_v1_SnapshotShard__Output>
        SnapshotStreamPiece: MessageTypeDefinition<_tally_shard_v1_SnapshotStreamPiece, _tally_shard_v1_SnapshotStreamPiece__Output>
        StatusRequest: MessageTypeDefinition<_tally_shard_v1_StatusRequest, _tally_shard_v1_StatusRequest__Output>
        StatusResponse: MessageTypeDefinition<_tally_shard_v1_StatusResponse, _tally_shard_v1_StatusResponse__Output>
        StreamSnapshotRequest: MessageTypeDefinition<_tally_shard_v1_StreamSnapshotRequest, _tally_shard_v1_StreamSnapshotRequest__Output>
      }
    }
  }
}

