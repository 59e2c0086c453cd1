// The public contract for the client: proto/counter.proto only (never the
// nodes' internal shard.proto, which the client package does not ship), its
// service constructors, and the gRPC service config every client of Tally
// is given (round-robin over routers, which calls are safe to retry). Both
// are compiled in (counter-descriptor.ts): importing the client reads no
// file, so a bundled or serverless deploy needs no proto/ beside it.
// Loading only: no channel is made here.
import * as protoLoader from '@grpc/proto-loader';
import { loadPackageDefinition, type GrpcObject } from '@grpc/grpc-js';
import type { ProtoGrpcType as CounterProto } from '../generated/counter.ts';
import { protoLoaderOptions, withLeanCodecs } from '../wire/index.ts';
import { counterDescriptor, serviceConfigText } from './counter-descriptor.ts';

export type * as counterV1 from '../generated/counter-v1.ts';

// The options every loader of Tally's protos shares (the generated types assume them).
const definition = protoLoader.fromJSON(counterDescriptor, protoLoaderOptions);
// Increment and IncrementBatch, the calls a service makes per event, and
// ReadMany, the call per feed page, encode and decode with the lean codec (no
// Long, string or message object per item); every other call keeps
// proto-loader's. Same bytes on the wire for any router to read
// (test/unit/wire/codecs/counter-codec.test.ts, counter-codec-read-many.test.ts).
const counterServiceKey = 'counter.v1.CounterService';
definition[counterServiceKey] = withLeanCodecs(definition[counterServiceKey]!);
const counterPackage = (loadPackageDefinition(definition) as GrpcObject & { counter: { v1: Record<string, unknown> } }).counter.v1;

export const CounterServiceClient = counterPackage.CounterService as CounterProto['counter']['v1']['CounterService'];
export const AdminServiceClient = counterPackage.AdminService as CounterProto['counter']['v1']['AdminService'];

/** The gRPC service config of proto/service-config.json, as grpc-js's 'grpc.service_config' channel option takes it. */
export interface ServiceConfig {
  loadBalancingConfig: Record<string, object>[];
  methodConfig: { name: { service: string; method?: string }[]; retryPolicy?: Record<string, unknown>; timeout?: string }[];
}

export const serviceConfig = JSON.parse(serviceConfigText) as ServiceConfig;
