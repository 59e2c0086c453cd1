// @tally/client as users get it: built and packed with npm pack, installed
// from the tarball into an empty directory outside this repository (offline:
// its dependencies are packed from this repository's node_modules), then used
// from plain JavaScript against a real cluster and type-checked from TypeScript.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';

const run = promisify(execFile);
const packageDir = path.join(repoRoot, 'packages/client');

function readJson<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
}

/** The installed packages that `names` need, from package-lock.json (every one hoisted to the top). */
function dependencyClosure(names: string[]): string[] {
  const locked = readJson<{ packages: Record<string, { dependencies?: Record<string, string> }> }>(
    path.join(repoRoot, 'package-lock.json'),
  ).packages;
  const closure = new Set<string>();
  const queue = [...names];
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    if (closure.has(name)) continue;
    const entry = locked[`node_modules/${name}`];
    if (entry === undefined) throw new Error(`${name} is not installed at the top of node_modules`);
    closure.add(name);
    queue.push(...Object.keys(entry.dependencies ?? {}));
  }
  return [...closure];
}

describe('client package', () => {
  let tc: TestCluster;
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-client-package-'));
  beforeAll(async () => {
    tc = await startCluster({ pairs: 1 });
  });
  afterAll(async () => {
    await tc?.stop();
    fs.rmSync(workDir, { recursive: true, force: true });
  });

  it('names its licence and repository, and its README covers what a first user needs', () => {
    const manifest = readJson<{ license?: string; repository?: { url?: string; directory?: string } }>(
      path.join(packageDir, 'package.json'),
    );
    expect(manifest.license).toBe('Apache-2.0');
    // The repository's licence, the same text in the package.
    const rootManifest = readJson<{ license?: string }>(path.join(repoRoot, 'package.json'));
    expect(rootManifest.license).toBe('Apache-2.0');
    const licence = fs.readFileSync(path.join(repoRoot, 'LICENSE'), 'utf8');
    expect(licence).toContain('Apache License');
    expect(licence).toContain('Version 2.0, January 2004');
    expect(fs.readFileSync(path.join(packageDir, 'LICENSE'), 'utf8')).toBe(licence);
    expect(manifest.repository?.url).toMatch(/^git\+https:/);
    expect(manifest.repository?.directory).toBe('packages/client');
    const readme = fs.readFileSync(path.join(packageDir, 'README.md'), 'utf8');
    for (const heading of [
      '## Install',
      '## A first increment',
      '## Keys and retries',
      '## Several routers',
      '## TLS and tokens',
      '## Errors',
    ])
      expect(readme).toContain(heading);
    // Every error code the library can reject with is explained.
    for (const code of [
      'invalid_argument',
      'out_of_range',
      'not_found',
      'failed_precondition',
      'resource_exhausted',
      'unavailable',
      'deadline_exceeded',
      'cancelled',
      'unauthenticated',
      'permission_denied',
      'internal',
    ])
      expect(readme, code).toContain(`\`${code}\``);
  });

  it('depends on grpc-js, proto-loader and protobufjs (error details) only, at the versions the repository pins', () => {
    const manifest = readJson<{ dependencies: Record<string, string> }>(path.join(packageDir, 'package.json'));
    const root = readJson<{ dependencies: Record<string, string> }>(path.join(repoRoot, 'package.json'));
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['@grpc/grpc-js', '@grpc/proto-loader', 'protobufjs']);
    for (const [name, range] of Object.entries(manifest.dependencies)) expect(range, name).toBe(`^${root.dependencies[name]}`);
  });

  it(
    'packs the client without server code, installs from the tarball, and a plain .mjs increments and reads a counter',
    { timeout: 180_000 },
    async () => {
      // npm pack builds the package first (prepack), from clean.
      const packed = JSON.parse((await run('npm', ['pack', '--json', '--pack-destination', workDir], { cwd: packageDir })).stdout) as {
        filename: string;
        files: { path: string }[];
      }[];
      const packedFiles = packed[0]!.files as { path: string; size: number }[];
      const files = packedFiles.map((file) => file.path);
      expect(files).toContain('dist/client/index.js');
      expect(files).toContain('dist/client/index.d.ts');
      expect(files).toContain('dist/client/testing.js');
      // The contract is compiled in: no proto/ to read, and no empty file (a type-only module compiles to one).
      expect(files.filter((file) => file.startsWith('proto/'))).toEqual([]);
      expect(packedFiles.filter((file) => file.size === 0).map((file) => file.path)).toEqual([]);
      // The servers' bounds and plumbing stay home: the client ships src/wire (the bounds it shares among them), never src/common.
      expect(files).toContain('dist/wire/checks/client-limits.js');
      expect(files.filter((file) => file.startsWith('dist/common/'))).toEqual([]);
      for (const file of ['README.md', 'LICENSE', 'package.json']) expect(files).toContain(file);
      // The public contract only: not the nodes' internal protocol, and declarations only for the public surface.
      expect(files.filter((file) => /shard/.test(file))).toEqual([]);
      // Declarations: the client's public files, and src/wire's, which they import through its index.ts.
      const declarations = files.filter((file) => file.endsWith('.d.ts'));
      expect(declarations.filter((file) => file.startsWith('dist/client/')).sort()).toEqual([
        'dist/client/client.d.ts',
        'dist/client/connection/connection-state.d.ts',
        'dist/client/index.d.ts',
        'dist/client/testing.d.ts',
        'dist/client/types.d.ts',
      ]);
      expect(declarations).toContain('dist/wire/errors/errors.d.ts');
      expect(declarations).toContain('dist/wire/checks/window-setting.d.ts');
      expect(declarations.filter((file) => !file.startsWith('dist/client/') && !file.startsWith('dist/wire/'))).toEqual([]);
      expect(
        files.filter((file) =>
          /^dist\/(cli|cluster|node|router|relay|membership|sketch|window|common)\/|^dist\/wire\/internal\//.test(file),
        ),
      ).toEqual([]);

      const dependencies = dependencyClosure(['@grpc/grpc-js', '@grpc/proto-loader']);
      const depsDir = path.join(workDir, 'deps');
      fs.mkdirSync(depsDir);
      await run(
        'npm',
        [
          'pack',
          '--ignore-scripts',
          '--silent',
          '--pack-destination',
          depsDir,
          ...dependencies.map((name) => path.join(repoRoot, 'node_modules', name)),
        ],
        { cwd: workDir },
      );
      const appDir = path.join(workDir, 'app');
      fs.mkdirSync(appDir);
      fs.writeFileSync(path.join(appDir, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
      const tarballs = [path.join(workDir, packed[0]!.filename), ...fs.readdirSync(depsDir).map((name) => path.join(depsDir, name))];
      await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', ...tarballs], { cwd: appDir });
      expect(fs.existsSync(path.join(appDir, 'node_modules/pino'))).toBe(false);

      fs.writeFileSync(
        path.join(appDir, 'main.mjs'),
        [
          "import { createTallyClient, TallyError } from '@tally/client';",
          "import { createFakeTallyClient } from '@tally/client/testing';",
          '// No address: the library reads TALLY_ROUTER.',
          'const client = createTallyClient();',
          'await client.ready();',
          "const { applied } = await client.increment('package:js', 5);",
          "const { total, exact } = await client.read('package:js');",
          'client.close();',
          'const fake = createFakeTallyClient();',
          "await fake.increment('package:js', 2);",
          "const fakeTotal = String((await fake.read('package:js')).total);",
          'console.log(JSON.stringify({ applied, total: String(total), exact, tallyError: typeof TallyError, fakeTotal }));',
        ].join('\n'),
      );
      const { stdout } = await run(process.execPath, ['main.mjs'], {
        cwd: appDir,
        env: { ...process.env, NODE_PATH: '', NODE_OPTIONS: '', TALLY_ROUTER: tc.cluster.routerAddress },
      });
      expect(JSON.parse(stdout)).toEqual({ applied: true, total: '5', exact: true, tallyError: 'function', fakeTotal: '2' });

      // The types resolve through the package's exports and check under strict NodeNext.
      fs.writeFileSync(
        path.join(appDir, 'main.ts'),
        [
          "import { createTallyClient, TallyError, type ConnectionState, type ReadResult } from '@tally/client';",
          "import { createFakeTallyClient, type FakeTallyClientApi } from '@tally/client/testing';",
          "const client = createTallyClient({ address: '127.0.0.1:50051', deadlineMs: 1_000, credentials: async () => 'token', channelOptions: { 'grpc.keepalive_time_ms': 600_000 } });",
          "client.on('state', (state: ConnectionState) => void state);",
          '// The fake stands where the client does.',
          'export const either: FakeTallyClientApi = Math.random() > 0.5 ? client : createFakeTallyClient();',
          "const read: ReadResult = await client.read('package:ts');",
          'const total: bigint = read.total;',
          'export const matched: boolean = total > 0n && !(read instanceof TallyError);',
        ].join('\n'),
      );
      fs.writeFileSync(
        path.join(appDir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            noEmit: true,
            types: ['node'],
          },
          files: ['main.ts'],
        }),
      );
      await run(process.execPath, [path.join(repoRoot, 'node_modules/typescript/bin/tsc'), '-p', appDir], { cwd: appDir });
    },
  );
});
