// Version skew on the internal wire: a current node serves requests recorded
// in the previous release's format (test/fixtures/shard-proto-v1, no
// protocol field), as a router or primary one release older sends them; a
// peer one version newer whose range still overlaps is served; one that has
// dropped this version is refused FAILED_PRECONDITION naming both versions;
// and the previous release decodes what the current one sends.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as protoLoader from '@grpc/proto-loader';
import { credentials, loadPackageDefinition, status, type GrpcObject, type ServiceError } from '@grpc/grpc-js';
import { protoLoaderOptions } from '../../src/wire/index.ts';
import { shardPackageDefinition, ShardNodeClient, type shardV1 } from '../../src/common/index.ts';
import { shardProtocol } from '../../src/wire/internal/index.ts';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { startCluster, waitForHealthy, type TestCluster } from '../helpers/cluster.ts';
import type { RawRpcClient } from '../helpers/raw-client.ts';

const previousProto = path.join(repoRoot, 'test/fixtures/shard-proto-v1/shard.proto');
const previousDefinition = protoLoader.loadSync(previousProto, { ...protoLoaderOptions, includeDirs: [] });
const PreviousShardNode = ((loadPackageDefinition(previousDefinition) as GrpcObject).tally as GrpcObject).shard as GrpcObject;

function call<Response>(client: RawRpcClient, method: string, request: object): Promise<Response> {
  return new Promise((resolve, reject) => {
    client[method]!(request, { deadline: Date.now() + 5_000 }, (error: ServiceError | null, response: Response) =>
      error ? reject(error) : resolve(response),
    );
  });
}

async function refusalOf(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (error) {
    return error as ServiceError;
  }
  throw new Error('expected a refusal, the call was served');
}

describe('wire version skew', () => {
  let tc: TestCluster;
  let previous: RawRpcClient;
  let current: shardV1.ShardNodeClient;

  beforeAll(async () => {
    tc = await startCluster({ pairs: 1 });
    await waitForHealthy(tc.client);
    const primary = tc.cluster.node(0, 'primary').address;
    const Client = (PreviousShardNode.v1 as GrpcObject).ShardNode as unknown as new (address: string, creds: unknown) => RawRpcClient;
    previous = new Client(primary, credentials.createInsecure());
    current = new ShardNodeClient(primary, credentials.createInsecure());
  }, 60_000);

  afterAll(async () => {
    previous?.close();
    current?.close();
    await tc?.stop();
  });

  it('a node serves Status, Apply, ReadShards and AppendEntries in the previous format (no protocol field)', async () => {
    const before = await call<{ role: string; epoch: string; configVersion: string }>(previous, 'Status', {});
    expect(before.role).toBe('primary');
    // Recorded format: no protocol field anywhere; a shard only this test writes.
    const applied = await call<{ results: { code: number }[] }>(previous, 'Apply', {
      epoch: before.epoch,
      groups: [{ items: [{ shardId: '900001', amount: '5' }] }],
    });
    expect(applied.results.map((result) => result.code)).toEqual([0]);
    const read = await call<{ totals: string[] }>(previous, 'ReadShards', { shardIds: ['900001'] });
    expect(read.totals).toEqual(['5']);
    // A previous release's primary probing a current follower (an empty append): answered, not refused for its format.
    const follower = tc.cluster.node(0, 'follower').address;
    const Client = (PreviousShardNode.v1 as GrpcObject).ShardNode as unknown as new (address: string, creds: unknown) => RawRpcClient;
    const toFollower = new Client(follower, credentials.createInsecure());
    try {
      const answer = await call<{ ok: boolean; lastLsn: string }>(toFollower, 'AppendEntries', {
        epoch: before.epoch,
        prevLsn: '0',
        prevEpoch: '0',
        entryCount: 0,
        columns: Buffer.alloc(0),
      });
      expect(typeof answer.ok).toBe('boolean');
    } finally {
      toFollower.close();
    }
  });

  it('an order without a configuration version (a router before versions) is refused FAILED_PRECONDITION once the node obeyed a versioned one', async () => {
    const before = await call<{ role: string; epoch: string; peer: string; configVersion: string }>(previous, 'Status', {});
    expect(BigInt(before.configVersion)).toBeGreaterThan(0n);
    const refusal = await refusalOf(
      call(previous, 'SetRole', { role: 'primary', epoch: before.epoch, peer: before.peer, syncRequired: false, configVersion: '0' }),
    );
    expect(refusal.code).toBe(status.FAILED_PRECONDITION);
    expect(refusal.details).toMatch(/without a configuration version .* upgrade every router/);
  });

  it('a peer one version newer whose range includes this one is served; one that dropped it is refused naming both versions', async () => {
    const statusWith = (protocol: shardV1.ProtocolVersion): Promise<shardV1.StatusResponse__Output> =>
      new Promise((resolve, reject) =>
        current.Status({ protocol }, { deadline: Date.now() + 5_000 }, (error, response) => (error ? reject(error) : resolve(response!))),
      );
    const served = await statusWith({ current: shardProtocol.current + 1, oldest: shardProtocol.current });
    expect(served.role).toBe('primary');
    expect(served.protocol).toEqual({ current: shardProtocol.current, oldest: shardProtocol.oldest });
    const newer = shardProtocol.current + 2;
    const refusal = (await refusalOf(statusWith({ current: newer, oldest: shardProtocol.current + 1 }))) as ServiceError;
    expect(refusal.code).toBe(status.FAILED_PRECONDITION);
    expect(refusal.details).toContain(`speaks version ${newer} (oldest it accepts ${shardProtocol.current + 1})`);
    expect(refusal.details).toContain(`this process speaks ${shardProtocol.current} (oldest ${shardProtocol.oldest})`);
    // Refused before anything happens: an Apply from that peer changes nothing.
    const applyRefusal = await refusalOf(
      new Promise((resolve, reject) =>
        current.Apply(
          {
            protocol: { current: newer, oldest: newer },
            epoch: served.epoch,
            groups: [{ items: [{ shardId: '900002', amount: '7' }] }],
          },
          { deadline: Date.now() + 5_000 },
          (error, response) => (error ? reject(error) : resolve(response)),
        ),
      ),
    );
    expect(applyRefusal.code).toBe(status.FAILED_PRECONDITION);
    const read = await call<{ totals: string[] }>(previous, 'ReadShards', { shardIds: ['900002'] });
    expect(read.totals).toEqual(['0']);
  });

  it('the previous release decodes what this one sends (the protocol field is skipped, every other field intact)', () => {
    const method = (definition: protoLoader.PackageDefinition, name: string) =>
      (definition['tally.shard.v1.ShardNode'] as Record<string, protoLoader.MethodDefinition<object, object>>)[name]!;
    const request: shardV1.SetRoleRequest = {
      protocol: { current: shardProtocol.current, oldest: shardProtocol.oldest },
      role: 'primary',
      epoch: '7',
      peer: '10.0.0.2:50061',
      syncRequired: true,
      configVersion: '12',
      nodeId: 'log-a',
    };
    const bytes = method(shardPackageDefinition, 'SetRole').requestSerialize(request);
    const decoded = method(previousDefinition, 'SetRole').requestDeserialize(bytes) as Record<string, unknown>;
    expect(decoded).toMatchObject({ role: 'primary', epoch: '7', peer: '10.0.0.2:50061', syncRequired: true, configVersion: '12' });
    expect(decoded).not.toHaveProperty('protocol');
    // And a status from a current node reads in the previous format, zone and all skipped.
    const statusBytes = method(shardPackageDefinition, 'Status').responseSerialize({ role: 'follower', epoch: '7', zone: 'zone-a' });
    expect(method(previousDefinition, 'Status').responseDeserialize(statusBytes)).toMatchObject({ role: 'follower', epoch: '7' });
  });
});
