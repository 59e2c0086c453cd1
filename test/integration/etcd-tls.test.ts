// TLS to etcd with real processes: etcd serving https and requiring a client
// certificate from its own CA (scripts/make-certs.sh's etcd-ca). A router
// with the etcd client certificate serves; one without a certificate, or
// with a certificate from the cluster's other CA (the one clients' and
// nodes' certificates come from), never reaches the directory and stops
// with one line.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EtcdProcess } from '../../src/cluster/etcd-process.ts';
import { ManagedProcess, routerMainPath } from '../../src/cluster/managed-process.ts';
import { makeCerts, startCluster, type TestCluster } from '../helpers/cluster.ts';
import { makeTempDir, removeTempDir } from '../helpers/temp-dir.ts';
import { tally } from '../helpers/cli.ts';

describe('TLS to etcd', () => {
  let dir: string;
  let certs: string;
  let etcd: EtcdProcess;
  let tc: TestCluster | undefined;
  const cert = (name: string): string => path.join(certs, name);

  beforeAll(async () => {
    dir = makeTempDir('etcd-tls');
    certs = path.join(dir, 'certs');
    makeCerts(certs, 1);
    etcd = new EtcdProcess({
      dataDir: path.join(dir, 'etcd'),
      tls: {
        certFile: cert('etcd.crt'),
        keyFile: cert('etcd.key'),
        caFile: cert('etcd-ca.crt'),
        clientCertFile: cert('etcd-client.crt'),
        clientKeyFile: cert('etcd-client.key'),
      },
    });
    await etcd.start();
  }, 60_000);

  afterAll(async () => {
    await tc?.stop();
    await etcd?.kill();
    removeTempDir(dir);
  });

  it('a router with the etcd client certificate keeps its directory in etcd over https', async () => {
    expect(etcd.endpoint).toMatch(/^https:\/\//);
    tc = await startCluster({
      pairs: 1,
      etcd: { endpoint: etcd.endpoint, prefix: '/tls/' },
      routerArgs: [
        '--etcd-tls-ca',
        cert('etcd-ca.crt'),
        '--etcd-tls-cert',
        cert('etcd-client.crt'),
        '--etcd-tls-key',
        cert('etcd-client.key'),
      ],
    });
    await tc.client.increment('over-tls', 3);
    expect((await tc.client.read('over-tls')).total).toBe(3n);
    expect((await tc.client.clusterStatus()).directoryStore).toBe('etcd');
    // The export tool speaks TLS to etcd the same way.
    const exported = await tally([
      'directory',
      'export',
      '--etcd',
      etcd.endpoint,
      '--etcd-prefix',
      '/tls/',
      '--etcd-tls-ca',
      cert('etcd-ca.crt'),
      '--etcd-tls-cert',
      cert('etcd-client.crt'),
      '--etcd-tls-key',
      cert('etcd-client.key'),
      '--file',
      path.join(dir, 'export.json'),
    ]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toMatch(/exported 1 counters/);
  }, 60_000);

  it('a router without a client certificate, or with one of the other CA, never reaches the directory and stops in one line', async () => {
    for (const [what, args] of [
      ['no client certificate', ['--etcd-tls-ca', cert('etcd-ca.crt')]],
      [
        'a certificate of the cluster CA',
        ['--etcd-tls-ca', cert('etcd-ca.crt'), '--etcd-tls-cert', cert('router.crt'), '--etcd-tls-key', cert('router.key')],
      ],
    ] as const) {
      const lines: string[] = [];
      const router = new ManagedProcess({
        name: 'refused-router',
        script: routerMainPath,
        args: [
          '--listen',
          '127.0.0.1:0',
          '--pairs',
          '127.0.0.1:1,127.0.0.1:2',
          '--data-dir',
          path.join(dir, 'refused'),
          '--metrics-port',
          '0',
          '--etcd',
          etcd.endpoint,
          '--etcd-prefix',
          '/refused/',
          '--router-id',
          'refused',
          ...args,
        ],
        onLine: (_name, line) => lines.push(line),
      });
      await expect(router.start(30_000), what).rejects.toThrow();
      await router.stop('SIGKILL');
      // One fatal line, no stack trace (Node's own TLS deprecation warning aside).
      const fatal = lines.filter((line) => line.startsWith('fatal:'));
      expect(fatal, `${what}: ${lines.join('\n')}`).toHaveLength(1);
      expect(fatal[0]).toMatch(/etcd/);
      expect(
        lines.some((line) => /^\s+at /.test(line)),
        `${what}: ${lines.join('\n')}`,
      ).toBe(false);
    }
  }, 90_000);
});
