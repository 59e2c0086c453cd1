// Server reflection on a Tally server, whose index of the protos is built on
// the first reflection call: both published versions answer from the start,
// list every service and resolve a symbol to the file that defines it, also
// when the first calls arrive together. The router and node processes are in
// test/integration/health-metrics.test.ts.
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, loadPackageDefinition, type Client } from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { FileDescriptorProto } from 'protobufjs/ext/descriptor/index.js';
import {
  bindServer,
  counterPackageDefinition,
  createTallyServer,
  shardPackageDefinition,
  shutdownServer,
  type TallyServer,
} from '../../../../src/common/index.ts';

const require = createRequire(import.meta.url);
const reflectionRoot = path.join(path.dirname(require.resolve('@grpc/reflection/package.json')), 'build/proto/grpc/reflection');

type Version = 'v1' | 'v1alpha';

interface ReflectionResponse {
  list_services_response?: { service: { name: string }[] };
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  error_response?: { error_code: number; error_message: string };
}

type ReflectionClient = Client & { ServerReflectionInfo(): NodeJS.ReadWriteStream & { write(request: object): boolean } };

function reflectionClient(version: Version, address: string): ReflectionClient {
  const definition = protoLoader.loadSync(path.join(reflectionRoot, version, 'reflection.proto'), { keepCase: true });
  const reflection = (
    loadPackageDefinition(definition) as unknown as {
      grpc: { reflection: Record<Version, { ServerReflection: new (address: string, creds: unknown) => ReflectionClient }> };
    }
  ).grpc.reflection[version];
  return new reflection.ServerReflection(address, credentials.createInsecure());
}

/** One request on a fresh reflection stream: its one response. */
function ask(version: Version, address: string, request: object): Promise<ReflectionResponse> {
  const client = reflectionClient(version, address);
  return new Promise((resolve, reject) => {
    const stream = client.ServerReflectionInfo();
    stream.on('data', (response: ReflectionResponse) => {
      resolve(response);
      stream.end();
      client.close();
    });
    stream.on('error', (error) => {
      client.close();
      reject(error);
    });
    stream.write(request);
  });
}

const servicesOf = (response: ReflectionResponse): string[] =>
  (response.list_services_response?.service ?? []).map((entry) => entry.name).sort();

describe('server reflection', () => {
  let tallyServer: TallyServer;
  let address: string;
  beforeAll(async () => {
    tallyServer = createTallyServer([shardPackageDefinition, counterPackageDefinition], ['tally.shard.v1.ShardNode']);
    address = `127.0.0.1:${await bindServer(tallyServer.server, '127.0.0.1:0')}`;
  });
  afterAll(async () => {
    await shutdownServer(tallyServer.server, 1_000);
  });

  it('the first calls, together on both versions, list every service of the merged definitions', async () => {
    const [v1, v1alpha] = await Promise.all([ask('v1', address, { list_services: '' }), ask('v1alpha', address, { list_services: '' })]);
    expect(servicesOf(v1)).toEqual(
      expect.arrayContaining(['counter.v1.AdminService', 'counter.v1.CounterService', 'tally.shard.v1.ShardNode']),
    );
    expect(servicesOf(v1alpha)).toEqual(servicesOf(v1));
  });

  it('a symbol resolves to the file that defines it; an unknown one is NOT_FOUND', async () => {
    const found = await ask('v1', address, { file_containing_symbol: 'tally.shard.v1.ShardNode' });
    const files = (found.file_descriptor_response?.file_descriptor_proto ?? []).map(
      (bytes) => FileDescriptorProto.decode(bytes) as unknown as { package: string; service?: { name: string }[] },
    );
    const defining = files.find((file) => file.service?.some((service) => service.name === 'ShardNode'));
    expect(defining?.package).toBe('tally.shard.v1');
    const missing = await ask('v1alpha', address, { file_containing_symbol: 'no.such.Thing' });
    // grpc.StatusCode NOT_FOUND
    expect(missing.error_response?.error_code).toBe(5);
  });
});
