// Node-only certificates, attacked with the files scripts/make-certs.sh
// writes: a client certificate (same CA) calling a node's internal API
// directly, a node or router certificate calling outside its role, a router
// certificate posing as a node; and the files themselves checked with openssl.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentials, status, type ServiceError } from '@grpc/grpc-js';
import { ShardNodeClient, channelCredentialsOf, type shardV1 } from '../../src/common/index.ts';
import { ManagedProcess, nodeMainPath, repoRoot } from '../../src/cluster/managed-process.ts';
import { startCluster, waitFor, type CertName, type TestCluster } from '../helpers/cluster.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';
import { tally } from '../helpers/cli.ts';

interface Outcome<Response> {
  error?: ServiceError;
  response?: Response;
}

/** One unary call, settled either way. */
function settle<Response>(
  invoke: (callback: (error: ServiceError | null, response?: Response) => void) => void,
): Promise<Outcome<Response>> {
  return new Promise((resolve) => invoke((error, response) => resolve(error ? { error } : { response })));
}

describe('node certificates', () => {
  let tc: TestCluster;
  let certDir: string;
  const rpcs: shardV1.ShardNodeClient[] = [];
  const file = (name: string): Buffer => fs.readFileSync(path.join(certDir, name));
  const deadline = (): { deadline: number } => ({ deadline: Date.now() + 5_000 });
  /** A raw ShardNode client at address presenting `as`'s certificate. */
  const nodeClient = (address: string, as: CertName): shardV1.ShardNodeClient => {
    const rpc = new ShardNodeClient(address, credentials.createSsl(file('ca.crt'), file(`${as}.key`), file(`${as}.crt`)));
    rpcs.push(rpc);
    return rpc;
  };
  const primaryAddress = (): string => tc.cluster.node(0, 'primary').address;
  const followerAddress = (): string => tc.cluster.node(0, 'follower').address;

  /** Requests that would change the pair if accepted: each is well formed (the router's certificate gets Apply through). */
  const forged = async (): Promise<{
    apply: shardV1.ApplyRequest;
    setRole: shardV1.SetRoleRequest;
    appendEntries: shardV1.AppendEntriesRequest;
    installSnapshot: shardV1.InstallSnapshotRequest;
  }> => {
    const placement = (await tc.client.describe('guarded')).placements[0]!;
    const primary = (await tc.client.clusterStatus()).nodes.find((node) => node.role === 'primary')!;
    return {
      apply: { epoch: String(placement.epoch), groups: [{ items: [{ shardId: String(placement.shardId), amount: '1000' }] }] },
      // Demote the primary at a newer epoch: a split brain if it were obeyed.
      setRole: { role: 'follower', epoch: String(primary.epoch + 1), peer: followerAddress(), nodeId: primary.nodeId },
      // Cut the follower's log back to nothing.
      appendEntries: { epoch: String(primary.epoch + 1), truncate: true, truncateAfterLsn: '0', prevLsn: '0', prevEpoch: '0' },
      installSnapshot: {
        epoch: String(primary.epoch + 1),
        snapshotId: 'forged',
        chunkIndex: 0,
        snapshotLsn: '0',
        snapshotEpoch: '0',
        done: true,
      },
    };
  };

  /** What must not change: the total through the router, and every node's role, epoch and log end. */
  const fingerprint = async (): Promise<string> => {
    const total = (await tc.client.read('guarded')).total;
    const nodes = (await tc.client.clusterStatus()).nodes.map((node) => `${node.address} ${node.role} ${node.epoch} ${node.lastLsn}`);
    return JSON.stringify({ total: String(total), nodes });
  };

  beforeAll(async () => {
    tc = await startCluster({ pairs: 1, secure: true });
    certDir = tc.certDir!;
    await tc.client.increment('guarded', 5);
  });
  afterAll(async () => {
    for (const rpc of rpcs) rpc.close();
    await tc?.stop();
  });

  it('a client certificate from make-certs.sh calling ShardNode directly (Apply, SetRole, AppendEntries, InstallSnapshot, Status) is refused PERMISSION_DENIED; nothing changes', async () => {
    const requests = await forged();
    // The follower's log end as the router saw it at its last probe: wait until that shows the increment replicated,
    // or replication finishing during the test would look like a change the forged calls made.
    await waitFor(
      async () => {
        const nodes = (await tc.client.clusterStatus()).nodes;
        return nodes.length === 2 && nodes.every((node) => node.lastLsn === nodes[0]!.lastLsn);
      },
      { timeoutMs: 10_000, what: "the router's status to show the follower's log at the primary's" },
    );
    const before = await fingerprint();
    const atPrimary = nodeClient(primaryAddress(), 'client');
    const atFollower = nodeClient(followerAddress(), 'client');
    const outcomes = {
      apply: await settle((callback) => atPrimary.Apply(requests.apply, deadline(), callback)),
      setRole: await settle((callback) => atPrimary.SetRole(requests.setRole, deadline(), callback)),
      appendEntries: await settle((callback) => atFollower.AppendEntries(requests.appendEntries, deadline(), callback)),
      installSnapshot: await settle((callback) => atFollower.InstallSnapshot(requests.installSnapshot, deadline(), callback)),
      status: await settle((callback) => atPrimary.Status({}, deadline(), callback)),
    };
    for (const [name, outcome] of Object.entries(outcomes)) {
      expect(outcome.error?.code, `${name}: ${outcome.error?.details ?? 'accepted'}`).toBe(status.PERMISSION_DENIED);
      expect(outcome.error!.details).toMatch(/this peer's certificate is a client certificate$/);
    }
    expect(outcomes.apply.error!.details).toBe(
      "ShardNode.Apply is for router certificates only; this peer's certificate is a client certificate",
    );
    expect(outcomes.appendEntries.error!.details).toMatch(/^ShardNode\.AppendEntries is for node certificates only/);
    expect(await fingerprint()).toBe(before);
    // Health stays open to any certificate from the CA (container health checks).
    const health = await tally(
      ['health', '--address', primaryAddress(), '--tls-ca', path.join(certDir, 'ca.crt')].concat([
        '--tls-cert',
        path.join(certDir, 'client.crt'),
        '--tls-key',
        path.join(certDir, 'client.key'),
      ]),
    );
    expect(health.stdout.trim()).toMatch(/SERVING$/);
  });

  it("each certificate only for its own role's calls: the router's drives a node but cannot replicate, a node's replicates but cannot drive", async () => {
    const requests = await forged();
    // The follower's log end as the router saw it at its last probe: wait until that shows the increment replicated,
    // or replication finishing during the test would look like a change the forged calls made.
    await waitFor(
      async () => {
        const nodes = (await tc.client.clusterStatus()).nodes;
        return nodes.length === 2 && nodes.every((node) => node.lastLsn === nodes[0]!.lastLsn);
      },
      { timeoutMs: 10_000, what: "the router's status to show the follower's log at the primary's" },
    );
    const before = await fingerprint();
    const routerAtFollower = nodeClient(followerAddress(), 'router');
    const nodeAtPrimary = nodeClient(primaryAddress(), 'node-0b');
    const refused = {
      routerAppend: await settle((callback) => routerAtFollower.AppendEntries(requests.appendEntries, deadline(), callback)),
      routerInstall: await settle((callback) => routerAtFollower.InstallSnapshot(requests.installSnapshot, deadline(), callback)),
      nodeApply: await settle((callback) => nodeAtPrimary.Apply(requests.apply, deadline(), callback)),
      nodeSetRole: await settle((callback) => nodeAtPrimary.SetRole(requests.setRole, deadline(), callback)),
    };
    for (const [name, outcome] of Object.entries(refused))
      expect(outcome.error?.code, `${name}: ${outcome.error?.details ?? 'accepted'}`).toBe(status.PERMISSION_DENIED);
    expect(refused.nodeApply.error!.details).toMatch(/this peer's certificate is a node certificate$/);
    expect(await fingerprint()).toBe(before);

    // The very Apply the client was refused goes through with the router's certificate:
    // the forged request was well formed, only the certificate stopped it.
    const routerAtPrimary = nodeClient(primaryAddress(), 'router');
    const applied = await settle<shardV1.ApplyResponse__Output>((callback) => routerAtPrimary.Apply(requests.apply, deadline(), callback));
    expect(applied.error, applied.error?.details).toBeUndefined();
    expect(applied.response!.results[0]!.code).toBe(0);
    expect((await tc.client.read('guarded')).total).toBe(5n + 1000n);
    // And the cluster still serves and replicates over each node's own certificate.
    await tc.client.increment('guarded', 2);
    await waitFor(
      async () => {
        const nodes = (await tc.client.clusterStatus()).nodes;
        return nodes.length === 2 && nodes.every((node) => node.inSync && node.lastLsn === nodes[0]!.lastLsn);
      },
      { timeoutMs: 10_000, what: 'the follower to hold every entry' },
    );
    expect((await tc.client.read('guarded')).total).toBe(1007n);
  });

  it("a router certificate cannot pose as a node: the router's and a primary's calls check the server is a node", async () => {
    const dataDir = makeTempDir('impostor');
    const impostor = new ManagedProcess({
      name: 'impostor',
      script: nodeMainPath,
      args: ['--listen', '127.0.0.1:0', '--data-dir', dataDir, '--metrics-port', '0'].concat(
        ['--tls-cert', path.join(certDir, 'router.crt'), '--tls-key', path.join(certDir, 'router.key')],
        ['--tls-ca', path.join(certDir, 'ca.crt')],
      ),
    });
    try {
      await impostor.start();
      // The credentials the router and a primary use for their calls to nodes.
      const asRouter = channelCredentialsOf({ cert: file('router.crt'), key: file('router.key'), ca: file('ca.crt') });
      const call = async (address: string): Promise<Outcome<shardV1.StatusResponse__Output>> => {
        const rpc = new ShardNodeClient(address, asRouter);
        rpcs.push(rpc);
        return settle((callback) => rpc.Status({}, deadline(), callback));
      };
      const real = await call(primaryAddress());
      expect(real.error, real.error?.details).toBeUndefined();
      const posing = await call(`127.0.0.1:${impostor.ports!.port}`);
      expect(posing.error?.code).toBe(status.UNAVAILABLE);
      expect(posing.error!.details).toMatch(/is not a node: its certificate is a router certificate/);
    } finally {
      await impostor.stop('SIGKILL');
      removeTempDir(dataDir);
    }
  });

  it('make-certs.sh: 0600 files under any umask, a CA that is one, leaves with CA:FALSE and their key usages, one key per node, no host names for clients', () => {
    const dir = makeTempDir('certs');
    const out = path.join(dir, 'certs');
    try {
      // A permissive umask: the script must set its own before it writes.
      execFileSync(
        'sh',
        ['-c', `umask 000; exec "$0" --pairs 3 "$1" 10.0.0.9 node-1b=db-1b.example`, path.join(repoRoot, 'scripts/make-certs.sh'), out],
        {
          stdio: 'ignore',
        },
      );
      const nodes = ['node-0a', 'node-0b', 'node-1a', 'node-1b', 'node-2a', 'node-2b'];
      const expected = ['ca', 'router', 'client', ...nodes, 'etcd-ca', 'etcd', 'etcd-client']
        .flatMap((name) => [`${name}.crt`, `${name}.key`])
        .concat(['admin.token', 'client.token']);
      expect(fs.readdirSync(out).sort()).toEqual(expected.sort());
      for (const name of fs.readdirSync(out)) expect((fs.statSync(path.join(out, name)).mode & 0o777).toString(8), name).toBe('600');
      expect((fs.statSync(out).mode & 0o777).toString(8)).toBe('700');

      const openssl = (...args: string[]): string => execFileSync('openssl', args, { encoding: 'utf8' });
      const extensions = (name: string): string =>
        openssl('x509', '-in', path.join(out, `${name}.crt`), '-noout', '-ext', 'basicConstraints,keyUsage,extendedKeyUsage,subjectAltName')
          .replace(/\s+/g, ' ')
          .trim();
      expect(extensions('ca')).toBe('X509v3 Basic Constraints: critical CA:TRUE X509v3 Key Usage: critical Certificate Sign, CRL Sign');
      const leaf = 'X509v3 Basic Constraints: critical CA:FALSE X509v3 Key Usage: critical Digital Signature, Key Encipherment';
      const both = 'X509v3 Extended Key Usage: TLS Web Server Authentication, TLS Web Client Authentication';
      expect(extensions('router')).toBe(
        `${leaf} ${both} X509v3 Subject Alternative Name: URI:spiffe://tally/router, DNS:localhost, IP Address:127.0.0.1, DNS:router, DNS:router-2, IP Address:10.0.0.9`,
      );
      for (const name of nodes)
        expect(extensions(name)).toBe(
          `${leaf} ${both} X509v3 Subject Alternative Name: URI:spiffe://tally/node/${name}, DNS:localhost, IP Address:127.0.0.1, DNS:${name}, IP Address:10.0.0.9${name === 'node-1b' ? ', DNS:db-1b.example' : ''}`,
        );
      expect(extensions('client')).toBe(
        `${leaf} X509v3 Extended Key Usage: TLS Web Client Authentication X509v3 Subject Alternative Name: URI:spiffe://tally/client`,
      );

      // Every leaf chains to the CA; the client's is no server certificate.
      const verify = (purpose: string, name: string): number =>
        spawnSync('openssl', ['verify', '-purpose', purpose, '-CAfile', path.join(out, 'ca.crt'), path.join(out, `${name}.crt`)]).status ??
        -1;
      for (const name of ['router', 'client', ...nodes]) expect(verify('sslclient', name), name).toBe(0);
      for (const name of ['router', ...nodes]) expect(verify('sslserver', name), name).toBe(0);
      expect(verify('sslserver', 'client')).not.toBe(0);

      // One key per node (and per role), each the key of its own certificate.
      const publicKeyOf = (name: string, kind: 'crt' | 'key'): string =>
        kind === 'crt'
          ? openssl('x509', '-in', path.join(out, `${name}.crt`), '-noout', '-pubkey')
          : openssl('pkey', '-in', path.join(out, `${name}.key`), '-pubout');
      const keys = ['ca', 'router', 'client', ...nodes].map((name) => {
        expect(publicKeyOf(name, 'crt'), name).toBe(publicKeyOf(name, 'key'));
        return publicKeyOf(name, 'key');
      });
      expect(new Set(keys).size).toBe(keys.length);
      // Two fresh random tokens.
      const tokens = ['admin.token', 'client.token'].map((name) => fs.readFileSync(path.join(out, name), 'utf8').trim());
      for (const token of tokens) expect(token).toMatch(/^[0-9a-f]{64}$/);
      expect(tokens[0]).not.toBe(tokens[1]);

      // Bad arguments: one line, exit 2, nothing written.
      const bad = (args: string[]): { status: number | null; stderr: string } =>
        spawnSync(path.join(repoRoot, 'scripts/make-certs.sh'), args, { encoding: 'utf8' });
      const unknownLeaf = bad(['--pairs', '1', path.join(dir, 'bad-leaf'), 'node-1a=10.0.0.1']);
      expect(unknownLeaf.status).toBe(2);
      expect(unknownLeaf.stderr.trim()).toBe("make-certs.sh: no server certificate named 'node-1a' (router, node-0a node-0b)");
      expect(bad(['--pairs', '0', path.join(dir, 'bad-pairs')]).status).toBe(2);
      expect(fs.existsSync(path.join(dir, 'bad-leaf')) || fs.existsSync(path.join(dir, 'bad-pairs'))).toBe(false);
    } finally {
      removeTempDir(dir);
    }
  });
});
