// docker-compose.yml's "regions" profile as docker-compose renders it: region
// us (a router and a pair of its own) linked both ways with this cluster as
// region eu, and the default cluster alone when the shell sets no region.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { repoRoot } from '../../src/cluster/managed-process.ts';
import { parseNodeConfig } from '../../src/node/config.ts';
import { parseRouterConfig } from '../../src/router/config.ts';

interface ComposeService {
  command?: string[];
  profiles?: string[];
  environment?: Record<string, string | null>;
  ports?: (string | { published?: string | number; target?: number; host_ip?: string })[];
  depends_on?: Record<string, unknown> | string[];
}

function composeServices(env: Record<string, string>, files = ['docker-compose.yml']): Record<string, ComposeService> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('TALLY_')));
  const fileArgs = files.flatMap((file) => ['-f', path.join(repoRoot, file)]);
  const normalized = execFileSync('docker-compose', [...fileArgs, '--profile', 'regions', 'config'], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...clean, ...env },
  });
  return (parseYaml(normalized) as { services: Record<string, ComposeService> }).services;
}

/** `NAME=HOST:PORT[,HOST:PORT...][;NAME=...]` (docs/regions.md) as region -> service hosts. */
function peersOf(service: ComposeService): Map<string, string[]> {
  const list = service.environment?.TALLY_PEER_REGIONS ?? '';
  return new Map(
    list
      .split(';')
      .filter((entry) => entry !== '')
      .map((entry) => {
        const [name, addresses] = entry.split('=');
        return [name!, addresses!.split(',').map((address) => address.split(':')[0]!)];
      }),
  );
}

const euRouters = ['router', 'router-2'];
const euNodes = ['node-0a', 'node-0b', 'node-1a', 'node-1b'];
const usServices = ['us-node-a', 'us-node-b', 'us-router'];

describe('compose: two regions', () => {
  it('the regions profile adds region us: its pair and a router on 127.0.0.1:51051, started only with the profile', () => {
    const services = composeServices({});
    for (const name of usServices) expect(services[name]?.profiles, name).toEqual(['regions']);
    for (const name of [...euRouters, ...euNodes]) expect(services[name]?.profiles, name).toBeUndefined();
    const us = services['us-router']!;
    expect(us.environment?.TALLY_REGION).toBe('us');
    expect(us.environment?.TALLY_PAIRS).toBe('us-node-a:50061,us-node-b:50061');
    // Its directory is its own (embedded), not region eu's etcd.
    expect(us.environment?.TALLY_ETCD ?? undefined).toBeUndefined();
    expect(Object.keys(us.depends_on ?? {}).sort()).toEqual(['us-node-a', 'us-node-b']);
    for (const name of ['us-node-a', 'us-node-b']) expect(services[name]!.environment?.TALLY_REGION, name).toBe('us');
    const published = (us.ports ?? []).map((port) =>
      typeof port === 'string' ? port : `${port.host_ip}:${port.published}:${port.target}`,
    );
    expect(published.map((port) => port.replace(/\/tcp$/, ''))).toEqual(['127.0.0.1:51051:50051']);
  });

  it('region us names every router of region eu as its peer, and each of them names us-router when the shell sets the region', () => {
    const services = composeServices({ TALLY_REGION: 'eu', TALLY_PEER_REGIONS: 'us=us-router:50051' });
    expect([...peersOf(services['us-router']!)]).toEqual([['eu', euRouters]]);
    for (const name of euRouters) {
      expect(services[name]!.environment?.TALLY_REGION, name).toBe('eu');
      const peers = peersOf(services[name]!);
      expect([...peers], name).toEqual([['us', ['us-router']]]);
      for (const host of peers.get('us')!) expect(services[host], `${name}'s peer ${host} is a service`).toBeDefined();
    }
    for (const name of euNodes) expect(services[name]!.environment?.TALLY_REGION, name).toBe('eu');
    // The processes accept what compose gives them (a container would die of a config error at start).
    const environmentOf = (name: string): NodeJS.ProcessEnv =>
      Object.fromEntries(Object.entries(services[name]!.environment ?? {}).map(([key, value]) => [key, value ?? '']));
    for (const name of ['us-router', ...euRouters]) {
      const config = parseRouterConfig(services[name]!.command!.slice(1), environmentOf(name));
      expect(config.region, name).toBe(name === 'us-router' ? 'us' : 'eu');
      expect(
        config.peerRegions.map((peer) => peer.name),
        name,
      ).toEqual([name === 'us-router' ? 'eu' : 'us']);
    }
    for (const name of ['us-node-a', ...euNodes])
      expect(() => parseNodeConfig(services[name]!.command!.slice(1), environmentOf(name)), name).not.toThrow();
  });

  it('without region settings in the shell the default cluster runs alone: its region and peers empty', () => {
    const services = composeServices({});
    for (const name of [...euRouters, ...euNodes]) {
      expect(services[name]!.environment?.TALLY_REGION ?? '', name).toBe('');
      expect(services[name]!.environment?.TALLY_PEER_REGIONS ?? '', name).toBe('');
    }
  });

  it('with docker-compose.tls.yml region us runs TLS and tokens too: no --insecure, the router identity and the admin token the peers share', () => {
    const services = composeServices({ TALLY_REGION: 'eu', TALLY_PEER_REGIONS: 'us=us-router:50051' }, [
      'docker-compose.yml',
      'docker-compose.tls.yml',
    ]);
    for (const name of usServices) expect(services[name]!.command, name).toEqual([name === 'us-router' ? 'router' : 'node']);
    for (const name of ['us-router', ...euRouters])
      expect(services[name]!.environment, name).toMatchObject({
        TALLY_TLS_CERT: '/certs/router.crt',
        TALLY_TLS_CA: '/certs/ca.crt',
        TALLY_ADMIN_TOKEN_FILE: '/certs/admin.token',
      });
    expect(services['us-node-a']!.environment?.TALLY_TLS_CERT).toBe('/certs/node-0a.crt');
    expect(services['us-node-b']!.environment?.TALLY_TLS_CERT).toBe('/certs/node-0b.crt');
  });
});
