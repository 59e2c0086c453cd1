// Loads proto/counter.proto, proto/shard.proto and proto/region.proto: service constructors and
// definitions. Message types are generated (src/generated), never written
// here. int64 is decoded as a decimal string (proto-loader `longs: String`)
// and encoded from a string or an exact number, so no amount ever passes
// through a float.
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import { loadPackageDefinition, type GrpcObject, type ServiceDefinition } from '@grpc/grpc-js';
import { protoLoaderOptions } from '../../wire/index.ts';
import type { ProtoGrpcType as CounterProto } from '../../generated/counter.ts';
import type { ProtoGrpcType as ShardProto } from '../../generated/shard.ts';
import type { ProtoGrpcType as RegionProto } from '../../generated/region.ts';

const protoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../proto');

// The options every loader of Tally's protos shares, reading from proto/.
const loadOptions: protoLoader.Options = { ...protoLoaderOptions, includeDirs: [protoDir] };

/** The generated message types, one namespace per package (src/generated: npm run proto:gen). */
export type * as counterV1 from '../../generated/counter-v1.ts';
export type * as shardV1 from '../../generated/tally-shard-v1.ts';
export type * as regionV1 from '../../generated/tally-region-v1.ts';

export const counterPackageDefinition = protoLoader.loadSync(path.join(protoDir, 'counter.proto'), loadOptions);
export const shardPackageDefinition = protoLoader.loadSync(path.join(protoDir, 'shard.proto'), loadOptions);
export const regionPackageDefinition = protoLoader.loadSync(path.join(protoDir, 'region.proto'), loadOptions);

/**
 * The client constructor of the service at dottedPath, typed as the generated
 * constructor (its clients have one typed method per RPC). The path is
 * checked here, once, at load; the generated types match the proto
 * (npm run proto:check).
 */
function serviceAt<Constructor>(definition: protoLoader.PackageDefinition, dottedPath: string): Constructor {
  let node: unknown = loadPackageDefinition(definition) as GrpcObject;
  for (const part of dottedPath.split('.')) node = (node as Record<string, unknown>)[part];
  if (typeof node !== 'function') throw new Error(`proto has no service ${dottedPath}`);
  return node as Constructor;
}

export const CounterServiceClient = serviceAt<CounterProto['counter']['v1']['CounterService']>(
  counterPackageDefinition,
  'counter.v1.CounterService',
);
export const AdminServiceClient = serviceAt<CounterProto['counter']['v1']['AdminService']>(
  counterPackageDefinition,
  'counter.v1.AdminService',
);
export const ShardNodeClient = serviceAt<ShardProto['tally']['shard']['v1']['ShardNode']>(
  shardPackageDefinition,
  'tally.shard.v1.ShardNode',
);

export const counterServiceDefinition: ServiceDefinition = CounterServiceClient.service;
export const adminServiceDefinition: ServiceDefinition = AdminServiceClient.service;
export const shardNodeServiceDefinition: ServiceDefinition = ShardNodeClient.service;
export const RegionLinkClient = serviceAt<RegionProto['tally']['region']['v1']['RegionLink']>(
  regionPackageDefinition,
  'tally.region.v1.RegionLink',
);
export const regionLinkServiceDefinition: ServiceDefinition = RegionLinkClient.service;
