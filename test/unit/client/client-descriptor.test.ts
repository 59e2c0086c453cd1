// The client's compiled-in contract: src/client/counter-descriptor.ts equals
// proto/counter.proto and proto/service-config.json as they are now, and the
// client bundled into one file runs from a directory with no proto/ in reach.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../../src/cluster/managed-process.ts';
import { counterDescriptor, serviceConfigText } from '../../../src/client/counter-descriptor.ts';
import { counterDescriptorFromProto, serviceConfigFromFile } from '../../../scripts/client-descriptor-source.ts';

const run = promisify(execFile);

describe('client descriptor', () => {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-client-bundle-'));
  afterAll(() => fs.rmSync(workDir, { recursive: true, force: true }));

  it('the compiled-in descriptor and service config equal proto/ (else run: npx tsx scripts/gen-client-descriptor.ts)', () => {
    expect(counterDescriptor, 'src/client/counter-descriptor.ts is stale: npx tsx scripts/gen-client-descriptor.ts').toEqual(
      counterDescriptorFromProto(repoRoot),
    );
    expect(JSON.parse(serviceConfigText)).toEqual(serviceConfigFromFile(repoRoot));
  });

  it(
    'bundled into one file, it loads and calls from a directory without proto/ (no file read at import)',
    { timeout: 60_000 },
    async () => {
      const bundle = path.join(workDir, 'client.mjs');
      await build({
        entryPoints: [path.join(repoRoot, 'src/client/index.ts')],
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        outfile: bundle,
        logLevel: 'silent',
        // grpc-js's CommonJS requires node built-ins by name: give the ESM bundle a require.
        banner: { js: "import { createRequire as __tallyRequire } from 'node:module'; const require = __tallyRequire(import.meta.url);" },
      });
      // A port nothing listens on: the call must get as far as connecting, with the contract loaded.
      const probe = net.createServer();
      await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
      const { port } = probe.address() as net.AddressInfo;
      await new Promise<void>((resolve) => probe.close(() => resolve()));
      fs.writeFileSync(
        path.join(workDir, 'main.mjs'),
        [
          "import { createTallyClient } from './client.mjs';",
          `const client = createTallyClient({ address: '127.0.0.1:${port}', deadlineMs: 1_000 });`,
          "const message = await client.increment('c', 1).then(() => 'applied', (error) => `${error.code}: ${error.message}`);",
          'client.close();',
          'console.log(message);',
        ].join('\n'),
      );
      expect(fs.existsSync(path.join(workDir, 'proto'))).toBe(false);
      const { stdout } = await run(process.execPath, ['main.mjs'], {
        cwd: workDir,
        env: { ...process.env, NODE_PATH: '', NODE_OPTIONS: '' },
      });
      expect(stdout.trim()).toBe(
        `unavailable: cannot reach a router at 127.0.0.1:${port}: connection refused (is the cluster running? --router / TALLY_ROUTER)`,
      );
    },
  );
});
