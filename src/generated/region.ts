import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { Component as _tally_region_v1_Component, Component__Output as _tally_region_v1_Component__Output } from './tally/region/v1/Component.ts';
import type { ComponentBatch as _tally_region_v1_ComponentBatch, ComponentBatch__Output as _tally_region_v1_ComponentBatch__Output } from './tally/region/v1/ComponentBatch.ts';
import type { ComponentVersion as _tally_region_v1_ComponentVersion, ComponentVersion__Output as _tally_region_v1_ComponentVersion__Output } from './tally/region/v1/ComponentVersion.ts';
import type { RegionAnswer as _tally_region_v1_RegionAnswer, RegionAnswer__Output as _tally_region_v1_RegionAnswer__Output } from './tally/region/v1/RegionAnswer.ts';
import type { RegionFrame as _tally_region_v1_RegionFrame, RegionFrame__Output as _tally_region_v1_RegionFrame__Output } from './tally/region/v1/RegionFrame.ts';
import type { RegionHello as _tally_region_v1_RegionHello, RegionHello__Output as _tally_region_v1_RegionHello__Output } from './tally/region/v1/RegionHello.ts';
import type { RegionLinkClient as _tally_region_v1_RegionLinkClient, RegionLinkDefinition as _tally_region_v1_RegionLinkDefinition } from './tally/region/v1/RegionLink.ts';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  tally: {
    region: {
      v1: {
        Component: MessageTypeDefinition<_tally_region_v1_Component, _tally_region_v1_Component__Output>
        ComponentBatch: MessageTypeDefinition<_tally_region_v1_ComponentBatch, _tally_region_v1_ComponentBatch__Output>
        ComponentVersion: MessageTypeDefinition<_tally_region_v1_ComponentVersion, _tally_region_v1_ComponentVersion__Output>
        RegionAnswer: MessageTypeDefinition<_tally_region_v1_RegionAnswer, _tally_region_v1_RegionAnswer__Output>
        RegionFrame: MessageTypeDefinition<_tally_region_v1_RegionFrame, _tally_region_v1_RegionFrame__Output>
        RegionHello: MessageTypeDefinition<_tally_region_v1_RegionHello, _tally_region_v1_RegionHello__Output>
        RegionLink: SubtypeConstructor<typeof grpc.Client, _tally_region_v1_RegionLinkClient> & { service: _tally_region_v1_RegionLinkDefinition }
      }
    }
  }
}

