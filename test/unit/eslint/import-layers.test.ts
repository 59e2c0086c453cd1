// The router's import rules (eslint/import-layers.js) refuse what they
// promise to refuse, and let the real tree through.
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../../..');
const eslint = new ESLint({ cwd: repoRoot });

async function layerErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(repoRoot, file) });
  return result!.messages.filter((message) => message.ruleId === 'tally/router-layers').map((message) => message.message);
}

describe('router import layers', () => {
  it('refuses a folder reaching past another folder’s index.ts, and a layer above its own', async () => {
    const errors = await layerErrors('src/router/read/probe.ts', "export { IncrementPath } from '../write/increment-path.ts';\n");
    expect(errors).toEqual([
      'import write/ through its surface, src/router/write/index.ts',
      'router/read may not import router/write: read may use directory, nodes, metrics (eslint/import-layers.js)',
    ]);
    expect(await layerErrors('src/router/write/probe.ts', "export { ReadPath } from '../read/index.ts';\n")).toEqual([]);
  });

  it('keeps the two stores apart and their packages inside them', async () => {
    expect(await layerErrors('src/router/directory/sqlite/probe.ts', "export { prefixEnd } from '../etcd/schema.ts';\n")).toEqual([
      'the SQLite and etcd stores never import each other: share through the directory model',
    ]);
    expect(await layerErrors('src/router/nodes/probe.ts', "export { default } from 'better-sqlite3';\n")).toEqual([
      'better-sqlite3 is imported only under src/router/directory/sqlite/',
    ]);
    expect(await layerErrors('src/router/read/probe.ts', "export { Etcd3 } from 'etcd3';\n")).toHaveLength(1);
    expect(await layerErrors('src/router/directory/etcd/probe.ts', "export { Etcd3 } from 'etcd3';\n")).toEqual([]);
  });

  it('lets code outside the router import only src/router/index.ts', async () => {
    expect(await layerErrors('src/cli/probe.ts', "export { choosePairs } from '../router/directory/placement.ts';\n")).toEqual([
      'outside src/router, import only src/router/index.ts',
    ]);
    expect(await layerErrors('src/cli/probe.ts', "export { openDirectoryTransfer } from '../router/index.ts';\n")).toEqual([]);
  });

  it('lets the HTTP port call the api’s handlers, not the paths under them, and keeps Connect inside it', async () => {
    expect(await layerErrors('src/router/http/probe.ts', "export { handler } from '../api/index.ts';\n")).toEqual([]);
    expect(await layerErrors('src/router/http/probe.ts', "export { IncrementPath } from '../write/index.ts';\n")).toEqual([
      'router/http may not import router/write: http may use api, metrics (eslint/import-layers.js)',
    ]);
    expect(await layerErrors('src/router/api/probe.ts', "export { ConnectError } from '@connectrpc/connect';\n")).toEqual([
      '@connectrpc/connect is imported only under src/router/http/',
    ]);
  });

  it('keeps the node’s log at the bottom: it imports nothing of state or replication', async () => {
    expect(await layerErrors('src/node/log/probe.ts', "export { Replicator } from '../replication/index.ts';\n")).toEqual([
      'node/log may not import node/replication: log may use only common (eslint/import-layers.js)',
    ]);
    expect(await layerErrors('src/node/replication/probe.ts', "export { ShardLog } from '../log/index.ts';\n")).toEqual([]);
  });

  it('keeps the node’s write path below its handlers, and reached only through its surface', async () => {
    expect(await layerErrors('src/node/write/probe.ts', "export { NodeContext } from '../handlers/index.ts';\n")).toEqual([
      'node/write may not import node/handlers: write may use log, state, replication (eslint/import-layers.js)',
    ]);
    expect(await layerErrors('src/node/handlers/probe.ts', "export { GroupCommitter } from '../write/group-commit.ts';\n")).toEqual([
      'import write/ through its surface, src/node/write/index.ts',
    ]);
    expect(await layerErrors('src/node/handlers/probe.ts', "export { GroupCommitter } from '../write/index.ts';\n")).toEqual([]);
  });
});
