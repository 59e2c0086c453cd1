// Loads proto/counter.proto and proto/shard.proto and describes their
// messages as TypeScript types. int64 travels as a decimal string (proto-loader
// `longs: String`) so no amount ever passes through a float.
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import { loadPackageDefinition, type GrpcObject, type ServiceClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';

const protoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../proto');

export const protoLoaderOptions: protoLoader.Options = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [protoDir],
};

/** The generated message types, one namespace per package (src/generated: npm run proto:gen). */
export type * as counterV1 from '../generated/counter-v1.ts';
export type * as shardV1 from '../generated/tally-shard-v1.ts';

export const counterPackageDefinition = protoLoader.loadSync(path.join(protoDir, 'counter.proto'), protoLoaderOptions);
export const shardPackageDefinition = protoLoader.loadSync(path.join(protoDir, 'shard.proto'), protoLoaderOptions);

function serviceAt(definition: protoLoader.PackageDefinition, dottedPath: string): ServiceClientConstructor {
  let node: unknown = loadPackageDefinition(definition) as GrpcObject;
  for (const part of dottedPath.split('.')) node = (node as Record<string, unknown>)[part];
  if (typeof node !== 'function') throw new Error(`proto has no service ${dottedPath}`);
  return node as ServiceClientConstructor;
}

export const CounterServiceClient = serviceAt(counterPackageDefinition, 'counter.v1.CounterService');
export const AdminServiceClient = serviceAt(counterPackageDefinition, 'counter.v1.AdminService');
export const ShardNodeClient = serviceAt(shardPackageDefinition, 'tally.shard.v1.ShardNode');

export const counterServiceDefinition: ServiceDefinition = CounterServiceClient.service;
export const adminServiceDefinition: ServiceDefinition = AdminServiceClient.service;
export const shardNodeServiceDefinition: ServiceDefinition = ShardNodeClient.service;

/** int64 on the wire: a decimal string when decoded; string or number when encoded. */
export type Int64Wire = string;

export type ConsistencyName = 'EXACT' | 'CACHED';

export interface IncrementRequestMsg {
  counter: string;
  amount: Int64Wire;
  idempotencyKey: Buffer;
}
export interface IncrementResponseMsg {
  applied: boolean;
  shard: number;
}
export interface IncrementBatchRequestMsg {
  items: IncrementRequestMsg[];
}
export interface IncrementBatchResponseMsg {
  results: IncrementResponseMsg[];
}
export interface ReadRequestMsg {
  counter: string;
  consistency: ConsistencyName;
}
export interface ReadResponseMsg {
  counter: string;
  total: Int64Wire;
  exact: boolean;
  asOfUnixMs: Int64Wire;
  stalenessMs: Int64Wire;
  shards: number;
}
export interface ReadManyRequestMsg {
  counters: string[];
  consistency: ConsistencyName;
}
export interface ReadManyResponseMsg {
  values: ReadResponseMsg[];
}
export interface DescribeRequestMsg {
  counter: string;
}
export interface ShardPlacementMsg {
  shard: number;
  shardId: Int64Wire;
  pair: number;
  primary: string;
  follower: string;
  epoch: Int64Wire;
}
export interface DescribeResponseMsg {
  counter: string;
  shards: number;
  placements: ShardPlacementMsg[];
  heatPerSec: number;
  config: { createdUnixMs: Int64Wire; autoscale: boolean; kind: string; windowBucketMs: Int64Wire; windowRetentionMs: Int64Wire };
  peakPerSec: number;
  shardRates: number[];
  skew: number;
}
export interface ConfigureRequestMsg {
  counter: string;
  autoscale: 'AUTOSCALE_UNCHANGED' | 'AUTOSCALE_ON' | 'AUTOSCALE_OFF';
  window?: WindowSettingsMsg | null;
  membershipPartitions?: number;
}
export interface HotCounterMsg {
  counter: string;
  ratePerSec: number;
  peakPerSec: number;
  shards: number;
  skew: number;
  shardRates: number[];
  autoscale: boolean;
}
export interface HotResponseMsg {
  counters: HotCounterMsg[];
  tracked: Int64Wire;
}
export interface SetShardsRequestMsg {
  counter: string;
  shards: number;
}
export interface SetShardsResponseMsg {
  counter: string;
  previousShards: number;
  shards: number;
}
export interface NodeInfoMsg {
  address: string;
  role: string;
  pair: number;
  health: string;
  lastLsn: Int64Wire;
  pid: number;
  shardCount: Int64Wire;
  replicationLagEntries: Int64Wire;
  error: string;
  epoch: Int64Wire;
  inSync: boolean;
  replicationLagMs: Int64Wire;
  nodeId: string;
  installing: boolean;
}
export interface ReplaceNodeRequestMsg {
  address: string;
  newAddress: string;
}
export interface ReplaceNodeResponseMsg {
  pair: number;
  primary: string;
  follower: string;
  epoch: Int64Wire;
}
export interface ClusterStatusResponseMsg {
  nodes: NodeInfoMsg[];
  counters: Int64Wire;
}

export interface ShardDriftMsg {
  pair: number;
  shardId: Int64Wire;
  counter: string;
  primaryMemory: Int64Wire;
  primaryLog: Int64Wire;
  followerMemory: Int64Wire;
  followerLog: Int64Wire;
  primaryDrift: Int64Wire;
  followerDrift: Int64Wire;
  replicaDrift: Int64Wire;
}
export interface PairReconcileMsg {
  pair: number;
  primaryLsn: Int64Wire;
  followerLsn: Int64Wire;
  followerChecked: boolean;
  note: string;
}
export interface ReconcileResultMsg {
  pairs: PairReconcileMsg[];
  shards: ShardDriftMsg[];
  shardsChecked: Int64Wire;
  shardsDrifting: Int64Wire;
}

// Internal shard node messages.
export interface ApplyItemMsg {
  // Numbers when sent (exact, and cheaper to encode than decimal strings); strings when received.
  shardId: Int64Wire | number;
  amount: Int64Wire | number;
  idempotencyKey: Buffer;
  fence?: boolean;
  routedShardCount?: number;
  op?: ApplyOpName;
  member?: Int64Wire;
  present?: boolean;
  registers?: Buffer;
  windowBucketMs?: Int64Wire;
  windowRetentionMs?: Int64Wire;
}
export type ApplyOpName = 'INCREMENT' | 'MEMBER_SET' | 'DISTINCT' | 'MEMBER_REPAIR';
export interface ApplyGroupMsg {
  items: ApplyItemMsg[];
}
export interface ApplyRequestMsg {
  epoch: Int64Wire;
  groups: ApplyGroupMsg[];
}
export interface GroupResultMsg {
  code: number;
  message: string;
  applied: boolean[];
  changed?: Int64Wire[];
}
export interface ApplyResponseMsg {
  results: GroupResultMsg[];
  lsn: Int64Wire;
}
export interface ReadShardsRequestMsg {
  shardIds: Int64Wire[];
}
export interface ReadShardsResponseMsg {
  totals: Int64Wire[];
  lsn: Int64Wire;
  role: string;
  epoch: Int64Wire;
  nodeId?: string;
}
/** What every node read answers besides its values: who answered, and at which epoch. */
export interface NodeReadMeta {
  lsn: Int64Wire;
  role: string;
  epoch: Int64Wire;
  /** The answering node's log identity. */
  nodeId?: string;
}
export interface ReadSketchesRequestMsg {
  shardIds: Int64Wire[];
  merge: boolean;
}
export interface ReadSketchesResponseMsg extends NodeReadMeta {
  sketches: Buffer[];
}
export interface ReadWindowsRequestMsg {
  shardIds: Int64Wire[];
  fromMs: Int64Wire;
  toMs: Int64Wire;
  bucketMs: Int64Wire;
}
export interface CheckMembersRequestMsg {
  shardIds: Int64Wire[];
  members: Int64Wire[];
}
export interface CheckMembersResponseMsg extends NodeReadMeta {
  present: boolean[];
}
export interface MemberCountsResponseMsg extends NodeReadMeta {
  memberCounts: Int64Wire[];
  totals: Int64Wire[];
}
export interface StatusResponseMsg {
  role: string;
  pid: number;
  lastLsn: Int64Wire;
  shardCount: Int64Wire;
  epoch: Int64Wire;
  ready: boolean;
  peer: string;
  syncRequired: boolean;
  followerAckedLsn: Int64Wire;
  followerCaughtUp: boolean;
  followerError: string;
  replicationLagMs: Int64Wire;
  epochStartLsn: Int64Wire;
  nodeId: string;
  lastEpoch: Int64Wire;
  checkpointLsn: Int64Wire;
  followerId: string;
  installing: boolean;
}
export interface SetRoleRequestMsg {
  role: string;
  epoch: Int64Wire;
  peer: string;
  syncRequired: boolean;
  catchUpTimeoutMs: number;
  nodeId?: string;
  minLastLsn?: Int64Wire;
}
export interface LogEntryWire {
  // Numbers when sent and exact as one (cheaper to encode); strings when received.
  lsn: Int64Wire | number;
  epoch: Int64Wire | number;
  shardId: Int64Wire | number;
  amount: Int64Wire | number;
  idempotencyKey: Buffer;
  atMs: Int64Wire | number;
  fenceShardCount: number;
  kind?: number;
  member?: Int64Wire;
  payload?: Buffer;
}
export interface AppendEntriesRequestMsg {
  epoch: Int64Wire;
  truncate: boolean;
  truncateAfterLsn: Int64Wire;
  entries: LogEntryWire[];
  prevLsn: Int64Wire;
  prevEpoch: Int64Wire;
}
export interface AppendEntriesResponseMsg {
  ok: boolean;
  lastLsn: Int64Wire;
  lastEpoch: Int64Wire;
  nodeId: string;
  checkpointLsn: Int64Wire;
}
export interface SnapshotShardMsg {
  shardId: Int64Wire | number;
  total: Int64Wire;
}
export interface SnapshotPartMsg {
  shardId: Int64Wire | number;
  part: string;
  data: Buffer;
}
export interface InstallSnapshotRequestMsg {
  epoch: Int64Wire;
  snapshotId: string;
  chunkIndex: number;
  snapshotLsn: Int64Wire;
  snapshotEpoch: Int64Wire;
  shards: SnapshotShardMsg[];
  parts: SnapshotPartMsg[];
  keys: LogEntryWire[];
  done: boolean;
}
export interface ReconcileRequestMsg {
  shardIds: Int64Wire[];
  compareAtLsn: Int64Wire;
}
export interface ShardCheckMsg {
  shardId: Int64Wire;
  memoryTotal: Int64Wire;
  logTotal: Int64Wire;
  logTotalAtCompareLsn: Int64Wire;
}
export interface ReconcileResponseMsg {
  lastLsn: Int64Wire;
  shards: ShardCheckMsg[];
  role: string;
  epoch: Int64Wire;
  checkpointLsn: Int64Wire;
  compareAvailable: boolean;
}

export interface AddDistinctRequestMsg {
  counter: string;
  members: Buffer[];
}
export interface AddDistinctResponseMsg {
  registersChanged: number;
}
export interface CountDistinctRequestMsg {
  counters: string[];
}
export interface CountDistinctResponseMsg {
  estimate: Int64Wire;
  standardError: number;
  shards: number;
}
export interface ReadWindowRequestMsg {
  counter: string;
  lastMs: Int64Wire;
  consistency: ConsistencyName;
}
export interface ReadWindowResponseMsg {
  counter: string;
  total: Int64Wire;
  exact: boolean;
  fromUnixMs: Int64Wire;
  toUnixMs: Int64Wire;
  bucketMs: Int64Wire;
  buckets: number;
  asOfUnixMs: Int64Wire;
  stalenessMs: Int64Wire;
}
export interface SetMemberRequestMsg {
  counter: string;
  member: Int64Wire;
  present: boolean;
}
export interface SetMemberResponseMsg {
  changed: boolean;
  count: Int64Wire;
  countUnavailable?: boolean;
}
export interface IsMemberRequestMsg {
  counter: string;
  members: Int64Wire[];
}
export interface IsMemberResponseMsg {
  present: boolean[];
}
export interface RebuildRequestMsg {
  counter: string;
  repair: boolean;
}
export interface PartitionCheckMsg {
  partition: number;
  shardId: Int64Wire;
  pair: number;
  members: Int64Wire;
  storedCount: Int64Wire;
  drift: Int64Wire;
  repaired: Int64Wire;
  followerChecked: boolean;
  followerDrift: Int64Wire;
}
export interface RebuildResponseMsg {
  counter: string;
  members: Int64Wire;
  storedCount: Int64Wire;
  drift: Int64Wire;
  repaired: boolean;
  partitions: PartitionCheckMsg[];
}
export interface WindowSettingsMsg {
  bucketMs: Int64Wire;
  retentionMs: Int64Wire;
}
