// What src/client/counter-descriptor.ts is made from, read from the
// repository: the generator writes it, the unit test compares it.
import fs from 'node:fs';
import path from 'node:path';
import protobuf from 'protobufjs';

/** proto/counter.proto parsed as proto-loader parses it (keepCase false: camelCase fields), as JSON. */
export function counterDescriptorFromProto(repoRoot: string): protobuf.INamespace {
  const root = new protobuf.Root();
  root.loadSync(path.join(repoRoot, 'proto/counter.proto'), { keepCase: false });
  root.resolveAll();
  return root.toJSON({ keepComments: false });
}

export function serviceConfigFromFile(repoRoot: string): unknown {
  return JSON.parse(fs.readFileSync(path.join(repoRoot, 'proto/service-config.json'), 'utf8'));
}
