// The contract for every language: proto/counter.proto linted and checked for
// breaking changes by buf against the last released copy
// (test/fixtures/proto-released), its per-language options, and the worked
// Python example of docs/clients.md run against a real cluster with TLS and
// tokens, its stubs generated from proto/ here (Debian python3-grpcio and
// python3-grpc-tools, which .ci/run installs; the test fails without them).
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { startCluster, type TestCluster } from '../helpers/cluster.ts';

const run = promisify(execFile);
const buf = path.join(repoRoot, 'node_modules/.bin/buf');
const baseline = path.join(repoRoot, 'test/fixtures/proto-released');
// Debian's interpreter: its python3-grpcio is not on a pyenv python3 that may come first on PATH.
const python = '/usr/bin/python3';

function bufRun(args: string[], cwd = repoRoot): { status: number | null; output: string } {
  if (!fs.existsSync(buf)) throw new Error('buf is not installed: it is the devDependency @bufbuild/buf (npm ci)');
  const result = spawnSync(buf, args, { cwd, encoding: 'utf8', timeout: 120_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

function requirePythonGrpc(): void {
  const check = spawnSync(python, ['-c', 'import grpc, grpc_tools.protoc'], { encoding: 'utf8' });
  if (check.status !== 0)
    throw new Error(
      `${python} cannot import grpc and grpc_tools: install the Debian packages python3-grpcio and python3-grpc-tools (.ci/run installs them): ${check.stderr.trim().split('\n').pop()}`,
    );
}

describe('proto contract', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-contract-'));
  let tc: TestCluster | undefined;
  afterAll(async () => {
    await tc?.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('counter.proto names its Go and Java packages', () => {
    const proto = fs.readFileSync(path.join(repoRoot, 'proto/counter.proto'), 'utf8');
    expect(proto).toMatch(/^option go_package = "[^"]+\/counter\/v1;counterv1";$/m);
    expect(proto).toMatch(/^option java_package = "[a-z.]+\.counter\.v1";$/m);
    expect(proto).toMatch(/^option java_multiple_files = true;$/m);
  });

  it('a plain `buf lint` passes on the repository as buf runs it (shard.proto and the vendored google/rpc left out by buf.yaml)', () => {
    const { status, output } = bufRun(['lint']);
    expect(status, output).toBe(0);
  });

  it('buf lint still fails on a badly named message in counter.proto, and leaves shard.proto and google/rpc alone', () => {
    const work = path.join(scratch, 'lint');
    fs.mkdirSync(path.join(work, 'proto/google/rpc'), { recursive: true });
    fs.copyFileSync(path.join(repoRoot, 'buf.yaml'), path.join(work, 'buf.yaml'));
    for (const name of ['counter.proto', 'shard.proto', 'google/rpc/status.proto', 'google/rpc/error_details.proto'])
      fs.copyFileSync(path.join(repoRoot, 'proto', name), path.join(work, 'proto', name));
    // The same bad name in the internal proto is not linted...
    fs.appendFileSync(path.join(work, 'proto/shard.proto'), '\nmessage bad_name {}\n');
    expect(bufRun(['lint'], work).status).toBe(0);
    // ...and in the public one it is.
    fs.appendFileSync(path.join(work, 'proto/counter.proto'), '\nmessage bad_name {}\n');
    const { status, output } = bufRun(['lint'], work);
    expect(status).not.toBe(0);
    expect(output).toContain('proto/counter.proto');
    expect(output).not.toContain('shard.proto');
    expect(output).not.toContain('google/rpc');
  });

  it("a plain `buf breaking` against the main branch's protos passes", () => {
    // --against-config: the main branch's files judged by this buf.yaml, so a change to buf.yaml is not a break by itself.
    // A checkout without a local main branch (a CI runner's detached clone) compares against its own HEAD.
    const hasMain = spawnSync('git', ['rev-parse', '--verify', '-q', 'refs/heads/main'], { cwd: repoRoot }).status === 0;
    const against = hasMain ? '.git#branch=main' : '.git#ref=HEAD';
    const { status, output } = bufRun(['breaking', '--against', against, '--against-config', 'buf.yaml']);
    expect(status, output).toBe(0);
  });

  it('buf.yaml cites only files that exist', () => {
    const text = fs.readFileSync(path.join(repoRoot, 'buf.yaml'), 'utf8');
    const cited = [...text.matchAll(/\b((?:[\w.-]+\/)*[\w.-]+\.(?:md|ts|proto))\b/g)].map((match) => match[1]!);
    expect(cited.length).toBeGreaterThan(0);
    // A bare proto name is a file of the module, proto/.
    for (const file of cited)
      expect(fs.existsSync(path.join(repoRoot, file)) || fs.existsSync(path.join(repoRoot, 'proto', file)), file).toBe(true);
  });

  it('buf lint accepts counter.proto', () => {
    const { status, output } = bufRun(['lint', '--path', 'proto/counter.proto']);
    expect(status, output).toBe(0);
  });

  it('buf breaking finds no breaking change against the last released counter.proto', () => {
    const { status, output } = bufRun(['breaking', 'proto', '--against', baseline]);
    expect(status, output).toBe(0);
  });

  it('buf breaking fails on a renumbered field and a changed java_package (the check can fail)', () => {
    const work = path.join(scratch, 'breaking');
    fs.mkdirSync(path.join(work, 'proto'), { recursive: true });
    fs.copyFileSync(path.join(repoRoot, 'buf.yaml'), path.join(work, 'buf.yaml'));
    for (const name of ['counter.proto', 'shard.proto'])
      fs.copyFileSync(path.join(repoRoot, 'proto', name), path.join(work, 'proto', name));
    const file = path.join(work, 'proto/counter.proto');
    const text = fs.readFileSync(file, 'utf8');
    const request = text.indexOf('message IncrementRequest {');
    const end = text.indexOf('}', request);
    const broken = text.slice(0, request) + text.slice(request, end).replace('int64 amount = 2;', 'int64 amount = 7;') + text.slice(end);
    expect(broken).not.toBe(text);
    fs.writeFileSync(file, broken.replace(/option java_package = "[^"]+";/, 'option java_package = "elsewhere";'));
    const { status, output } = bufRun(['breaking', 'proto', '--against', baseline], work);
    expect(status).not.toBe(0);
    expect(output).toContain('"amount" on message "IncrementRequest" was deleted');
    expect(output).toContain('java_package');
  });

  it(
    'python: the worked example of docs/clients.md (stubs from proto/, TLS, Bearer token, a dead router first) keys, retries, reads int64 exactly and gets the right statuses',
    { timeout: 120_000 },
    async () => {
      requirePythonGrpc();
      const gen = path.join(scratch, 'gen');
      fs.mkdirSync(gen);
      await run(python, [
        '-m',
        'grpc_tools.protoc',
        '-I',
        path.join(repoRoot, 'proto'),
        `--python_out=${gen}`,
        `--grpc_python_out=${gen}`,
        'counter.proto',
        'google/rpc/status.proto',
        'google/rpc/error_details.proto',
      ]);
      tc = await startCluster({ pairs: 1, secure: true });
      const certDir = tc.certDir!;
      // A router that is down comes first: keyed writes and reads move past it, an unkeyed write is never sent to it.
      const routers = `127.0.0.1:1,${tc.cluster.routerAddress}`;
      const { stdout } = await run(
        python,
        [
          path.join(repoRoot, 'docs/examples/python/counter_example.py'),
          '--routers',
          routers,
          '--ca',
          path.join(certDir, 'ca.crt'),
          '--token-file',
          path.join(certDir, 'client.token'),
          '--service-config',
          path.join(repoRoot, 'proto/service-config.json'),
          '--counter',
          'python:example',
        ],
        { env: { ...process.env, PYTHONPATH: gen }, timeout: 90_000 },
      );
      const steps = stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const step = (name: string): Record<string, unknown>[] => steps.filter((one) => one.step === name);
      expect(step('health')[0]!.serving).toEqual([false, true]);
      expect(step('keyed')[0]).toMatchObject({ applied: true, retried_applied: false });
      expect(step('unkeyed')[0]).toMatchObject({ applied: true });
      expect(step('read')[0]).toMatchObject({ total: '6', exact: true, is_int: true });
      expect(step('bad-input')).toEqual([
        { step: 'bad-input', case: 'zero', code: 'INVALID_ARGUMENT', reason: 'NOT_APPLIED' },
        { step: 'bad-input', case: 'empty-name', code: 'INVALID_ARGUMENT', reason: 'NOT_APPLIED' },
      ]);
      // Refused on its headers by the token check: the ErrorInfo is there too.
      expect(step('no-token')[0]).toMatchObject({ code: 'UNAUTHENTICATED', reason: 'NOT_APPLIED' });
      // What Python wrote, the TypeScript client reads: the key counted once, 2^62 and back exactly.
      expect((await tc.client.read('python:example')).total).toBe(6n);
    },
  );

  it('docs: docs/clients.md runs the example with the commands this test runs', () => {
    const doc = fs.readFileSync(path.join(repoRoot, 'docs/clients.md'), 'utf8');
    expect(doc).toContain(
      'python3 -m grpc_tools.protoc -I proto --python_out=gen --grpc_python_out=gen proto/counter.proto proto/google/rpc/status.proto proto/google/rpc/error_details.proto',
    );
    expect(doc).toContain('docs/examples/python/counter_example.py');
    expect(doc).toContain('proto/service-config.json');
  });
});
