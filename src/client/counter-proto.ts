// The public contract for the client: proto/counter.proto only (never the
// nodes' internal shard.proto, which the client package does not ship), its
// service constructors, and the gRPC service config every client of Tally
// is given (proto/service-config.json: round-robin over routers, which calls
// are safe to retry). Loading only: no channel is made here.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as protoLoader from '@grpc/proto-loader';
import { loadPackageDefinition, type GrpcObject } from '@grpc/grpc-js';
import type { ProtoGrpcType as CounterProto } from '../generated/counter.ts';
// A specific file, never ../common/index.ts (server code): no grpc-js, no server deps.
import { withLeanCodecs } from '../common/counter-codec.ts';

export type * as counterV1 from '../generated/counter-v1.ts';

/** proto/ beside src/ in the repository, and beside dist/ in the client package. */
const protoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../proto');

/**
 * The options src/common/proto.ts loads with (the generated types assume
 * them; a unit test keeps the two equal): int64 as decimal strings, so no
 * amount passes through a float.
 */
export const counterLoaderOptions: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [protoDir],
};

const definition = protoLoader.loadSync(path.join(protoDir, 'counter.proto'), counterLoaderOptions);
// Increment and IncrementBatch, the calls a service makes per event, and
// ReadMany, the call per feed page, encode and decode with the lean codec (no
// Long, string or message object per item); every other call keeps
// proto-loader's. Same bytes on the wire for any router to read
// (test/unit/counter-codec.test.ts, counter-codec-read-many.test.ts).
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

export const serviceConfig = JSON.parse(fs.readFileSync(path.join(protoDir, 'service-config.json'), 'utf8')) as ServiceConfig;
