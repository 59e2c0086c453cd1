// The kit's certificates against real processes: every Certificate of the
// rendered base issued as cert-manager's CA issuer would (openssl, ECDSA
// P-256, the same names, URIs and usages, Secrets as tls.crt, tls.key and
// ca.crt), then a node started with the kit's TLS settings, probed by the
// exact command of its exec probes, and called with each certificate: the
// router's drives it, the client's is refused, etcd's CA is not trusted; and
// an etcd started with the kit's flags (this machine's Debian etcd 3.4: the
// TLS flags are 3.5's too) serves the routers' etcd certificate and refuses
// their Tally one. cert-manager itself does not run here; the emulation is
// the shape it documents for its CA issuer.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { status, type ServiceError } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShardNodeClient, channelCredentialsOf, type shardV1 } from '../../src/common/index.ts';
import { ManagedProcess, nodeMainPath } from '../../src/cluster/managed-process.ts';
import { openEtcdClient } from '../../src/router/directory/etcd/index.ts';
import { waitFor } from '../helpers/cluster.ts';
import { tally } from '../helpers/cli.ts';
import { environmentOf, podsOf, render, type K8sObject } from '../helpers/kubernetes-kit.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';

interface CertificateSpec {
  secretName: string;
  isCA?: boolean;
  commonName?: string;
  dnsNames?: string[];
  ipAddresses?: string[];
  uris?: string[];
  usages?: string[];
  issuerRef: { name: string };
}

const extendedUsages: Readonly<Record<string, string>> = { 'server auth': 'serverAuth', 'client auth': 'clientAuth' };
const keyUsages: Readonly<Record<string, string>> = { 'digital signature': 'digitalSignature', 'key encipherment': 'keyEncipherment' };

/** Issues every Certificate of `objects` into dir/<secretName>/{tls.crt,tls.key,ca.crt}, CAs first. */
function issue(objects: K8sObject[], dir: string): void {
  const certificates = objects.filter((object) => object.kind === 'Certificate').map((object) => object.spec as unknown as CertificateSpec);
  const issuers = new Map(objects.filter((object) => object.kind === 'Issuer').map((object) => [object.metadata.name, object.spec!]));
  const openssl = (args: string[]): void => void execFileSync('openssl', args, { stdio: 'pipe' });
  const ordered = [...certificates.filter((one) => one.isCA === true), ...certificates.filter((one) => one.isCA !== true)];
  for (const certificate of ordered) {
    const secret = path.join(dir, certificate.secretName);
    fs.mkdirSync(secret, { recursive: true });
    const key = path.join(secret, 'tls.key');
    openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
    const subject = `/O=tally/CN=${certificate.commonName ?? certificate.secretName}`;
    if (certificate.isCA === true) {
      // Issued by the self-signed bootstrap issuer: its own CA.
      const config = path.join(secret, 'ca.cnf');
      fs.writeFileSync(
        config,
        '[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = unused\n[ca]\nbasicConstraints = critical,CA:TRUE\nkeyUsage = critical,keyCertSign,cRLSign\n',
      );
      openssl([
        'req',
        '-x509',
        '-new',
        '-key',
        key,
        '-config',
        config,
        '-extensions',
        'ca',
        '-subj',
        subject,
        '-days',
        '30',
        '-out',
        path.join(secret, 'tls.crt'),
      ]);
      fs.copyFileSync(path.join(secret, 'tls.crt'), path.join(secret, 'ca.crt'));
      continue;
    }
    const caSecret = (issuers.get(certificate.issuerRef.name)?.ca as { secretName: string } | undefined)?.secretName;
    if (caSecret === undefined) throw new Error(`${certificate.secretName}: issuer ${certificate.issuerRef.name} is not a CA issuer`);
    const names = [
      ...(certificate.dnsNames ?? []).map((name) => `DNS:${name}`),
      ...(certificate.ipAddresses ?? []).map((address) => `IP:${address}`),
      ...(certificate.uris ?? []).map((uri) => `URI:${uri}`),
    ];
    const usages = certificate.usages ?? [];
    const extensions = [
      '[leaf]',
      'basicConstraints = critical,CA:FALSE',
      `keyUsage = critical,${usages.flatMap((usage) => keyUsages[usage] ?? []).join(',')}`,
      `extendedKeyUsage = ${usages.flatMap((usage) => extendedUsages[usage] ?? []).join(',')}`,
      ...(names.length > 0 ? [`subjectAltName = ${names.join(',')}`] : []),
    ];
    fs.writeFileSync(path.join(secret, 'leaf.ext'), `${extensions.join('\n')}\n`);
    openssl(['req', '-new', '-key', key, '-subj', subject, '-out', path.join(secret, 'leaf.csr')]);
    openssl(
      ['x509', '-req', '-in', path.join(secret, 'leaf.csr'), '-CA', path.join(dir, caSecret, 'tls.crt')].concat(
        ['-CAkey', path.join(dir, caSecret, 'tls.key'), '-set_serial', '0x1000', '-days', '30'],
        ['-extfile', path.join(secret, 'leaf.ext'), '-extensions', 'leaf', '-out', path.join(secret, 'tls.crt')],
      ),
    );
    fs.copyFileSync(path.join(dir, caSecret, 'tls.crt'), path.join(secret, 'ca.crt'));
  }
}

/** A loopback port free when asked. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** A container's environment with every path inside a mounted Secret moved to where issue() wrote that Secret. */
function withIssuedSecrets(objects: K8sObject[], podName: string, secretsDir: string, keys: RegExp): Record<string, string> {
  const pod = podsOf(objects).find((one) => one.name === podName)!;
  const container = pod.spec.containers[0]!;
  const mounts = (container.volumeMounts ?? []).flatMap((mount) => {
    const secret = pod.spec.volumes?.find((volume) => volume.name === mount.name)?.secret;
    return secret === undefined ? [] : [{ from: `${mount.mountPath}/`, to: path.join(secretsDir, secret.secretName, '/') }];
  });
  return Object.fromEntries(
    Object.entries(environmentOf(container, objects, pod))
      .filter(([key]) => keys.test(key))
      .map(([key, value]) => {
        const mount = mounts.find((one) => value.startsWith(one.from));
        if (mount === undefined) throw new Error(`${podName}: ${key}=${value} is in no Secret it mounts`);
        return [key, mount.to + value.slice(mount.from.length)];
      }),
  );
}

/** One unary call, settled either way. */
function settle<Response>(
  invoke: (callback: (error: ServiceError | null, response?: Response) => void) => void,
): Promise<{ error?: ServiceError; response?: Response }> {
  return new Promise((resolve) => invoke((error, response) => resolve(error ? { error } : { response })));
}

describe('kubernetes kit certificates on real processes', () => {
  let dir: string;
  let node: ManagedProcess;
  let probeEnv: Record<string, string>;
  let objects: K8sObject[];
  const secretFile = (secretName: string, file: string): Buffer => fs.readFileSync(path.join(dir, 'secrets', secretName, file));
  const clients: shardV1.ShardNodeClient[] = [];

  beforeAll(async () => {
    dir = makeTempDir('kit-certificates');
    const rendered = render('deploy/kubernetes/base');
    issue(rendered, path.join(dir, 'secrets'));
    objects = rendered;
    // The node as the kit runs it: its TLS settings, the Secret mounted where the kit mounts it.
    probeEnv = withIssuedSecrets(objects, 'tally-node-a-0', path.join(dir, 'secrets'), /^TALLY_TLS_/);
    expect(Object.keys(probeEnv).sort()).toEqual(['TALLY_TLS_CA', 'TALLY_TLS_CERT', 'TALLY_TLS_KEY']);
    node = new ManagedProcess({
      name: 'kit-node',
      script: nodeMainPath,
      args: ['--listen', '127.0.0.1:0', '--data-dir', path.join(dir, 'data'), '--metrics-port', '0'],
      env: { ...probeEnv, TALLY_NODE_NAME: 'tally-node-a-0' },
    });
    await node.start();
  }, 60_000);

  afterAll(async () => {
    for (const client of clients) client.close();
    await node?.stop('SIGKILL');
    if (dir !== undefined) removeTempDir(dir);
  });

  it("the exec probe's command, with the node's own files, reports SERVING over mutual TLS", async () => {
    const result = await tally(['health', '--address', `127.0.0.1:${node.ports!.port}`], probeEnv);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toMatch(/SERVING$/);
  });

  it("the router's certificate drives the node; the client's is refused; one from etcd's CA is not trusted", async () => {
    const call = async (secretName: string): Promise<{ error?: ServiceError }> => {
      const asCaller = channelCredentialsOf({
        cert: secretFile(secretName, 'tls.crt'),
        key: secretFile(secretName, 'tls.key'),
        ca: secretFile(secretName, 'ca.crt'),
      });
      const client = new ShardNodeClient(`127.0.0.1:${node.ports!.port}`, asCaller);
      clients.push(client);
      return settle((callback) => client.Status({}, { deadline: Date.now() + 5_000 }, callback));
    };
    const router = await call('tally-router-tls');
    expect(router.error, router.error?.details).toBeUndefined();
    const client = await call('tally-client-tls');
    expect(client.error?.code).toBe(status.PERMISSION_DENIED);
    expect(client.error!.details).toMatch(/this peer's certificate is a client certificate/);
    const etcdClient = await call('tally-etcd-client-tls');
    expect(etcdClient.error?.code).toBe(status.UNAVAILABLE);
  });

  it("etcd with the kit's flags serves the routers' etcd certificate and refuses a Tally certificate", async () => {
    const secrets = path.join(dir, 'secrets');
    const member = podsOf(objects).find((pod) => pod.name === 'tally-etcd-0')!;
    const container = member.spec.containers[0]!;
    const [clientPort, peerPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
    const mountOf = (mountPath: string): string => {
      const mount = container.volumeMounts!.find((one) => mountPath.startsWith(`${one.mountPath}/`))!;
      const secret = member.spec.volumes!.find((volume) => volume.name === mount.name)!.secret!.secretName;
      return path.join(secrets, secret, mountPath.slice(mount.mountPath.length + 1));
    };
    // The kit's arguments, with loopback ports for its host names and the issued Secrets for its mounts.
    const args = (container.args ?? []).map((arg) => {
      const [flag, value = ''] = arg.split(/=(.*)/s);
      if (['--listen-client-urls', '--advertise-client-urls'].includes(flag!)) return `${flag}=https://127.0.0.1:${clientPort}`;
      if (['--listen-peer-urls', '--initial-advertise-peer-urls'].includes(flag!)) return `${flag}=https://127.0.0.1:${peerPort}`;
      if (flag === '--initial-cluster') return `${flag}=tally-etcd-0=https://127.0.0.1:${peerPort}`;
      if (flag === '--listen-metrics-urls') return `${flag}=http://127.0.0.1:${metricsPort}`;
      if (flag === '--name') return `${flag}=tally-etcd-0`;
      if (flag === '--data-dir') return `${flag}=${path.join(dir, 'etcd')}`;
      if (value.startsWith('/etc/etcd/')) return `${flag}=${mountOf(value)}`;
      return arg;
    });
    expect(args).toContain('--client-cert-auth');
    expect(args).toContain('--peer-client-cert-auth');
    const etcd: ChildProcess = spawn('etcd', args, { stdio: 'ignore' });
    const clients: { close(): void }[] = [];
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${metricsPort}/health`).catch(() => undefined))?.ok === true, {
        timeoutMs: 20_000,
        what: 'etcd to answer /health',
      });
      const routerEnv = withIssuedSecrets(
        objects,
        podsOf(objects).find((pod) => pod.owner.kind === 'Deployment')!.name,
        secrets,
        /^TALLY_(TLS|ETCD_TLS)_/,
      );
      const connect = (certFile: string, keyFile: string): ReturnType<typeof openEtcdClient> => {
        const client = openEtcdClient([`https://127.0.0.1:${clientPort}`], { caFile: routerEnv.TALLY_ETCD_TLS_CA!, certFile, keyFile });
        clients.push(client);
        return client;
      };
      const asRouter = connect(routerEnv.TALLY_ETCD_TLS_CERT!, routerEnv.TALLY_ETCD_TLS_KEY!);
      await asRouter.put('kit-probe').value('1');
      expect(await asRouter.get('kit-probe').string()).toBe('1');
      // The routers' Tally certificate (another CA): etcd refuses the handshake.
      const asTally = connect(routerEnv.TALLY_TLS_CERT!, routerEnv.TALLY_TLS_KEY!);
      const refused = await Promise.race([
        asTally
          .get('kit-probe')
          .string()
          .then(
            () => 'answered',
            () => 'refused',
          ),
        new Promise((resolve) => setTimeout(() => resolve('no answer within 10 s'), 10_000)),
      ]);
      expect(refused).toBe('refused');
    } finally {
      for (const client of clients) client.close();
      etcd.kill('SIGKILL');
    }
  }, 60_000);
});
