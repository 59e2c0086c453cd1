// Original file: proto/region.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { RegionAnswer as _tally_region_v1_RegionAnswer, RegionAnswer__Output as _tally_region_v1_RegionAnswer__Output } from '../../../tally/region/v1/RegionAnswer.ts';
import type { RegionFrame as _tally_region_v1_RegionFrame, RegionFrame__Output as _tally_region_v1_RegionFrame__Output } from '../../../tally/region/v1/RegionFrame.ts';

export interface RegionLinkClient extends grpc.Client {
  /**
   * The publishing region streams batches of components; the receiving
   * router answers each batch once it is durable in its region's node logs.
   * The first frame is a hello; the first answer says where the receiver is
   * (the newest version it holds from that origin) and the sender resumes
   * from there.
   */
  Exchange(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_tally_region_v1_RegionFrame, _tally_region_v1_RegionAnswer__Output>;
  Exchange(options?: grpc.CallOptions): grpc.ClientDuplexStream<_tally_region_v1_RegionFrame, _tally_region_v1_RegionAnswer__Output>;
  /**
   * The publishing region streams batches of components; the receiving
   * router answers each batch once it is durable in its region's node logs.
   * The first frame is a hello; the first answer says where the receiver is
   * (the newest version it holds from that origin) and the sender resumes
   * from there.
   */
  exchange(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_tally_region_v1_RegionFrame, _tally_region_v1_RegionAnswer__Output>;
  exchange(options?: grpc.CallOptions): grpc.ClientDuplexStream<_tally_region_v1_RegionFrame, _tally_region_v1_RegionAnswer__Output>;
  
}

export interface RegionLinkHandlers extends grpc.UntypedServiceImplementation {
  /**
   * The publishing region streams batches of components; the receiving
   * router answers each batch once it is durable in its region's node logs.
   * The first frame is a hello; the first answer says where the receiver is
   * (the newest version it holds from that origin) and the sender resumes
   * from there.
   */
  Exchange: grpc.handleBidiStreamingCall<_tally_region_v1_RegionFrame__Output, _tally_region_v1_RegionAnswer>;
  
}

export interface RegionLinkDefinition extends grpc.ServiceDefinition {
  Exchange: MethodDefinition<_tally_region_v1_RegionFrame, _tally_region_v1_RegionAnswer, _tally_region_v1_RegionFrame__Output, _tally_region_v1_RegionAnswer__Output>
}
