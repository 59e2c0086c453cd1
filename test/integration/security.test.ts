// Security (TLS, mutual TLS, authorised admin, safe defaults) attacked from
// outside: plaintext clients, foreign certificates, missing and wrong
// tokens, a plaintext listener off loopback.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, status } from '@grpc/grpc-js';
import { ShardNodeClient } from '../../src/common/index.ts';
import { createTallyClient, type TallyClient, type TallyError } from '../../src/client/index.ts';
import { nodeMainPath, repoRoot, routerMainPath } from '../../src/cluster/managed-process.ts';
import { makeCerts, startCluster, waitFor, type TestCluster } from '../helpers/cluster.ts';
import { tally } from '../helpers/cli.ts';
import { codeOf, rejection } from '../helpers/rejection.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';
import type { RawRpcClient } from '../helpers/raw-client.ts';

describe('security', () => {
  let tc: TestCluster;
  let certDir: string;
  const clients: TallyClient[] = [];
  const client = (options: Partial<Parameters<typeof createTallyClient>[0]>): TallyClient => {
    const made = createTallyClient({ address: tc.cluster.routerAddress, deadlineMs: 3_000, attemptsMax: 1, ...options });
    clients.push(made);
    return made;
  };
  const file = (name: string): Buffer => fs.readFileSync(path.join(certDir, name));

  beforeAll(async () => {
    tc = await startCluster({ pairs: 1, secure: true });
    certDir = tc.certDir!;
  });
  afterAll(async () => {
    for (const made of clients) made.close();
    await tc?.stop();
  });

  it('tls: a TLS cluster (mutual TLS between processes) serves increments and reads; replication runs over mTLS', async () => {
    const user = client({ tls: { ca: file('ca.crt') }, token: file('client.token').toString().trim() });
    await user.increment('secure', 5);
    await user.incrementBatch([{ counter: 'secure', amount: 2 }]);
    expect((await user.read('secure')).total).toBe(7n);
    const status = await tc.client.clusterStatus();
    expect(status.nodes.every((node) => node.health === 'SERVING')).toBe(true);
    expect(status.nodes[1]!.lastLsn).toBeGreaterThan(0n);
  });

  it('tls: a plaintext client cannot talk to the router', async () => {
    const plain = client({ token: file('client.token').toString().trim() });
    expect((await rejection(plain.read('secure'))).grpcCode).toBe(status.UNAVAILABLE);
  });

  it('mtls: a node refuses a client whose certificate does not chain to the cluster CA', async () => {
    const foreign = makeTempDir('foreign-ca');
    makeCerts(foreign, 1);
    const node = tc.cluster.node(0, 'primary');
    // Trusts the node (cluster CA) but presents a certificate from another CA.
    const rpc = new ShardNodeClient(
      node.address,
      credentials.createSsl(
        file('ca.crt'),
        fs.readFileSync(path.join(foreign, 'client.key')),
        fs.readFileSync(path.join(foreign, 'client.crt')),
      ),
    ) as unknown as RawRpcClient;
    const outcome = await new Promise<{ code?: number }>((resolve) =>
      rpc.Status!({}, { deadline: Date.now() + 3_000 }, (error: { code: number } | null) => resolve(error ?? {})),
    );
    rpc.close();
    expect(outcome.code).toBe(status.UNAVAILABLE);
    // The same call with the cluster's router certificate succeeds (a client
    // certificate is refused: node-certificates.test.ts).
    const own = new ShardNodeClient(
      node.address,
      credentials.createSsl(file('ca.crt'), file('router.key'), file('router.crt')),
    ) as unknown as RawRpcClient;
    const ok = await new Promise<{ role?: string }>((resolve) =>
      own.Status!({}, { deadline: Date.now() + 3_000 }, (error: unknown, response: { role: string }) => resolve(error ? {} : response)),
    );
    own.close();
    expect(ok.role).toBe('primary');
    removeTempDir(foreign);
  });

  it('auth: admin calls without a credential are UNAUTHENTICATED, with the client credential PERMISSION_DENIED; nothing changes', async () => {
    await tc.client.increment('guarded', 1);
    const anonymous = client({ tls: { ca: file('ca.crt') } });
    const user = client({ tls: { ca: file('ca.crt') }, token: file('client.token').toString().trim() });
    const impostor = client({ tls: { ca: file('ca.crt') }, token: 'not-the-admin-token-at-all-0000' });
    expect((await rejection(anonymous.setShards('guarded', 4))).grpcCode).toBe(status.UNAUTHENTICATED);
    expect((await rejection(impostor.setShards('guarded', 4))).grpcCode).toBe(status.UNAUTHENTICATED);
    expect((await rejection(user.setShards('guarded', 4))).grpcCode).toBe(status.PERMISSION_DENIED);
    expect((await rejection(user.describe('guarded'))).grpcCode).toBe(status.PERMISSION_DENIED);
    expect((await rejection(anonymous.increment('guarded', 1))).grpcCode).toBe(status.UNAUTHENTICATED);
    expect((await tc.client.describe('guarded')).shards).toBe(1);
    expect((await tc.client.read('guarded')).total).toBe(1n);
    // The admin token may do both.
    expect((await tc.client.setShards('guarded', 2)).shards).toBe(2);
  });

  it('auth: an IncrementStream without a credential is refused UNAUTHENTICATED (NOT_APPLIED) on its headers; with the client token its batches are applied, over TLS', async () => {
    const before = (await tc.client.read('stream:secure')).total;
    // The coalescing client sends its batches on the stream; one tick's calls are one batch.
    const anonymous = client({ tls: { ca: file('ca.crt') }, coalesce: true });
    const refused = await Promise.allSettled([anonymous.increment('stream:secure', 1), anonymous.increment('stream:secure', 1)]);
    for (const outcome of refused) {
      expect(outcome.status).toBe('rejected');
      const error = (outcome as PromiseRejectedResult).reason as TallyError;
      expect([error.grpcCode, error.reason]).toEqual([status.UNAUTHENTICATED, 'NOT_APPLIED']);
    }
    const user = client({ tls: { ca: file('ca.crt') }, token: file('client.token').toString().trim(), coalesce: true });
    await Promise.all([user.increment('stream:secure', 2), user.increment('stream:secure', 3)]);
    expect((await tc.client.read('stream:secure')).total).toBe(before + 5n);
  });

  it('cli: TLS and a token file work from the command line; the token never needs to be an argument', async () => {
    const args = ['--router', tc.cluster.routerAddress, '--tls-ca', path.join(certDir, 'ca.crt')];
    const incr = await tally(['incr', 'cli:secure', '3', ...args, '--token-file', path.join(certDir, 'client.token')]);
    expect(incr.code, incr.stderr).toBe(0);
    const denied = await tally(['set-shards', 'cli:secure', '2', ...args], { TALLY_TOKEN: file('client.token').toString().trim() });
    expect(denied.code).toBe(1);
    expect(denied.stderr.trim()).toMatch(/^tally: permission_denied: /);
    const health = await tally([
      'health',
      '--address',
      tc.cluster.nodes[0]!.address,
      '--tls-ca',
      path.join(certDir, 'ca.crt'),
      '--tls-cert',
      path.join(certDir, 'client.crt'),
      '--tls-key',
      path.join(certDir, 'client.key'),
    ]);
    expect(health.stdout.trim()).toMatch(/SERVING$/);
  });

  it('safe defaults: a node or router asked to listen off loopback without TLS refuses to start with one line', async () => {
    const run = (script: string, args: string[]): Promise<{ code: number | null; stderr: string }> =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: repoRoot });
        let stderr = '';
        child.stderr.on('data', (chunk) => (stderr += chunk));
        child.on('exit', (code) => resolve({ code, stderr }));
      });
    const dataDir = makeTempDir('insecure');
    const node = await run(nodeMainPath, ['--listen', '0.0.0.0:0', '--data-dir', dataDir]);
    expect(node.code).toBe(2);
    expect(node.stderr.trim()).toBe(
      'config error: refusing to listen on 0.0.0.0 (--listen) without TLS: give --tls-cert, --tls-key and --tls-ca, or --insecure to accept plaintext',
    );
    const router = await run(routerMainPath, ['--listen', '0.0.0.0:0', '--pairs', '127.0.0.1:1,127.0.0.1:2', '--data-dir', dataDir]);
    expect(router.code).toBe(2);
    expect(router.stderr).toMatch(/^config error: refusing to listen on 0\.0\.0\.0/);
    const halfTls = await run(routerMainPath, ['--tls-cert', 'x.crt', '--pairs', '127.0.0.1:1,127.0.0.1:2', '--data-dir', dataDir]);
    expect(halfTls.stderr.trim()).toBe('config error: --tls-cert, --tls-key and --tls-ca go together: give all three or none');
    removeTempDir(dataDir);
    // The check as a unit, for machines with only loopback addresses.
    const { checkPlaintextAllowed } = await import('../../src/common/index.ts');
    expect(() => checkPlaintextAllowed('10.1.2.3', undefined, false)).toThrow(/without TLS/);
    expect(() => checkPlaintextAllowed('10.1.2.3', undefined, true)).not.toThrow();
    expect(() => checkPlaintextAllowed('127.0.0.1', undefined, false)).not.toThrow();
    // Loopback is an IP literal in 127.0.0.0/8 or ::1; a name that merely starts like one is not.
    for (const host of ['127.5.6.7', '::1', '[::1]']) expect(() => checkPlaintextAllowed(host, undefined, false)).not.toThrow();
    for (const host of ['127.evil.example', '127.0.0.1.evil.example', 'localhost', '1270.0.0.1', '::2', ''])
      expect(() => checkPlaintextAllowed(host, undefined, false), host).toThrow(/without TLS/);
  });
  it('safe defaults: off loopback the router refuses to start without both tokens; --allow-unauthenticated starts it, warning', async () => {
    const dataDir = makeTempDir('open');
    const pairsArgs = ['--pairs', '127.0.0.1:1,127.0.0.1:2', '--data-dir', dataDir, '--metrics-port', '0'];
    const refused = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', routerMainPath, '--listen', '0.0.0.0:0', '--insecure', ...pairsArgs], {
        cwd: repoRoot,
        env: { ...process.env, TALLY_ADMIN_TOKEN: 'only-the-admin-token-is-set' },
      });
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('exit', (code) => resolve({ code, stderr }));
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/^config error: refusing to serve 0\.0\.0\.0 \(--listen\) without a client token/);
    // Explicitly open: it starts, and says so at every start.
    const open = spawn(
      process.execPath,
      ['--import', 'tsx', routerMainPath, '--listen', '0.0.0.0:0', '--insecure', '--allow-unauthenticated', ...pairsArgs],
      { cwd: repoRoot },
    );
    let output = '';
    open.stdout.on('data', (chunk) => (output += chunk));
    open.stderr.on('data', (chunk) => (output += chunk));
    try {
      await waitFor(() => output.includes('"msg":"ready"'), { timeoutMs: 15_000, what: 'the open router ready' });
      expect(output).toMatch(/--allow-unauthenticated: anyone who reaches this port may call every service/);
    } finally {
      open.kill('SIGKILL');
      removeTempDir(dataDir);
    }
  });

  it('client: a token is never sent in plaintext off loopback; the CLI says so in one line', async () => {
    const build = (address: string, withTls: boolean) => () =>
      createTallyClient({ address, token: 'a-token-of-enough-length', ...(withTls ? { tls: { ca: file('ca.crt') } } : {}) }).close();
    for (const address of ['10.1.2.3:50051', 'localhost:50051', '127.evil.example:50051', 'dns:///router.example:50051'])
      expect(codeOf(build(address, false)), address).toBe('failed_precondition');
    for (const address of ['127.0.0.1:50051', '[::1]:50051', '127.3.2.1:1'])
      expect(codeOf(build(address, false)), address).toBe('no error');
    expect(codeOf(build('10.1.2.3:50051', true))).toBe('no error');
    const tokenFile = path.join(certDir, 'client.token');
    const result = await tally(['get', 'x', '--router', '10.1.2.3:50051', '--token-file', tokenFile]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/refusing to send a token to 10\.1\.2\.3:50051 without TLS/);
  });
});
