// Unit tests for the router's parseRouterConfig and parsePairs: defaults,
// environment keys mirroring flags, and startup errors that name the key.
import { describe, expect, it } from 'vitest';
import os from 'node:os';
import {
  counterTtlMsMax,
  counterTtlMsMin,
  etcdEndpointsMax,
  pairsMax,
  routerIdBytesMax,
  routerLeaseTtlMsMax,
  routerLeaseTtlMsMin,
} from '../../../src/common/index.ts';
import { defaultRouterId, parseEtcdEndpoints, parsePairs, parseRouterConfig, routerDefaults } from '../../../src/router/config.ts';
import { configErrorOf, envKeyOf } from '../../helpers/config.ts';

const twoPairs = 'n1:1,n2:2;n3:3,n4:4';

describe('router config: parsePairs', () => {
  it('parsePairs reads primary,follower pairs separated by ";" and trims members', () => {
    expect(parsePairs(' n1:1 , n2:2 ;n3:3,n4:4')).toEqual([
      { primary: 'n1:1', follower: 'n2:2' },
      { primary: 'n3:3', follower: 'n4:4' },
    ]);
  });

  it('parsePairs requires a value', () => {
    expect(configErrorOf(() => parsePairs(''))).toContain('--pairs is required');
    expect(configErrorOf(() => parsePairs('   '))).toContain('--pairs is required');
  });

  it.each([
    ['a pair with one member', 'n1:1', 'entry 0'],
    ['a pair with three members', 'n1:1,n2:2;n3:3,n4:4,n5:5', 'entry 1'],
    ['a trailing ";"', 'n1:1,n2:2;', 'entry 1'],
    ['a member without a port', 'n1:1,n2', 'entry 0'],
  ])('router config: parsePairs rejects %s and names the entry', (_label, value, entry) => {
    expect(configErrorOf(() => parsePairs(value))).toContain(entry);
  });

  it('parsePairs rejects a node named twice, within or across pairs', () => {
    expect(configErrorOf(() => parsePairs('n1:1,n1:1'))).toContain('twice');
    expect(configErrorOf(() => parsePairs('n1:1,n2:2;n3:3,n1:1'))).toContain('twice');
  });

  it('parsePairs accepts pairsMax pairs and rejects one more', () => {
    const pairsText = (count: number): string => Array.from({ length: count }, (_, index) => `p${index}:1,f${index}:1`).join(';');
    expect(parsePairs(pairsText(pairsMax))).toHaveLength(pairsMax);
    expect(configErrorOf(() => parsePairs(pairsText(pairsMax + 1)))).toContain(`limit is ${pairsMax}`);
  });
});

describe('router config: parseRouterConfig', () => {
  it('with only --pairs every other setting is its default', () => {
    expect(parseRouterConfig(['--pairs', twoPairs], {})).toEqual({
      ...routerDefaults,
      pairs: parsePairs(twoPairs),
      routerId: `${os.hostname()}:50051`,
    });
    // Without --etcd the directory is the embedded SQLite file, as before several routers.
    expect(routerDefaults.etcdEndpoints).toBeUndefined();
    expect(routerDefaults.refreshIntervalMs).toBe(1_000);
  });

  it('every numeric setting is read from the TALLY_ environment key that mirrors its name', () => {
    // refreshIntervalMs <-> TALLY_REFRESH_INTERVAL_MS: a setting whose key does not mirror its name fails here.
    const numericKeys = Object.keys(routerDefaults).filter((key) => typeof routerDefaults[key as keyof typeof routerDefaults] === 'number');
    expect(numericKeys).toContain('refreshIntervalMs');
    const env: Record<string, string> = { TALLY_PAIRS: twoPairs };
    // The default TTL is 0 (none) or at least counterTtlMsMin: 1 is no TTL at all. etcd leases are whole seconds.
    const valueOf = (key: string): number =>
      key === 'counterTtlMs'
        ? counterTtlMsMin
        : (routerDefaults[key as keyof typeof routerDefaults] as number) + (key === 'routerLeaseTtlMs' ? 1_000 : 1);
    for (const key of numericKeys) env[envKeyOf(key)] = String(valueOf(key));
    const config = parseRouterConfig([], env) as unknown as Record<string, unknown>;
    for (const key of numericKeys) expect({ key, value: config[key] }).toEqual({ key, value: valueOf(key) });
  });

  it('string settings are read from TALLY_ environment keys', () => {
    const config = parseRouterConfig([], {
      TALLY_PAIRS: twoPairs,
      TALLY_LISTEN: '0.0.0.0:7000',
      TALLY_DATA_DIR: '/var/tally',
      TALLY_METRICS_HOST: '0.0.0.0',
      TALLY_LOG_LEVEL: 'debug',
      // Off loopback without TLS or tokens needs both explicit opt-ins.
      TALLY_INSECURE: 'true',
      TALLY_ALLOW_UNAUTHENTICATED: 'true',
      TALLY_ETCD: 'http://etcd-1:2379,https://etcd-2:2379',
      TALLY_ETCD_PREFIX: '/prod/tally/',
      TALLY_ROUTER_ID: 'router-west',
    });
    expect(config).toMatchObject({
      etcdEndpoints: ['http://etcd-1:2379', 'https://etcd-2:2379'],
      etcdPrefix: '/prod/tally/',
      routerId: 'router-west',
      listenAddress: '0.0.0.0:7000',
      pairs: parsePairs(twoPairs),
      dataDir: '/var/tally',
      metricsHost: '0.0.0.0',
      logLevel: 'debug',
    });
  });

  it('a flag beats its environment key', () => {
    const config = parseRouterConfig(['--pairs', twoPairs, '--refresh-interval-ms=50'], { TALLY_REFRESH_INTERVAL_MS: '250' });
    expect(config.refreshIntervalMs).toBe(50);
  });

  it('missing --pairs fails at startup', () => {
    expect(configErrorOf(() => parseRouterConfig([], {}))).toContain('--pairs');
  });

  it('an out-of-range refresh interval names the flag or the environment key it came from', () => {
    expect(configErrorOf(() => parseRouterConfig(['--pairs', twoPairs, '--refresh-interval-ms', '5'], {}))).toContain(
      '--refresh-interval-ms',
    );
    expect(configErrorOf(() => parseRouterConfig(['--pairs', twoPairs], { TALLY_REFRESH_INTERVAL_MS: '5' }))).toContain(
      'TALLY_REFRESH_INTERVAL_MS',
    );
  });

  it('--counter-ttl-ms is 0 (no default TTL) or counterTtlMsMin..counterTtlMsMax', () => {
    const ttlOf = (value: string): number => parseRouterConfig(['--pairs', twoPairs, '--counter-ttl-ms', value], {}).counterTtlMs;
    expect(routerDefaults.counterTtlMs).toBe(0);
    expect(ttlOf('0')).toBe(0);
    expect(ttlOf(String(counterTtlMsMin))).toBe(counterTtlMsMin);
    expect(ttlOf(String(counterTtlMsMax))).toBe(counterTtlMsMax);
    expect(configErrorOf(() => ttlOf('999'))).toContain('--counter-ttl-ms must be 0 (no default) or at least 1000');
    expect(configErrorOf(() => ttlOf(String(counterTtlMsMax + 1)))).toContain('--counter-ttl-ms');
    expect(configErrorOf(() => ttlOf('7d'))).toContain('--counter-ttl-ms');
  });

  it('a cache of zero entries is refused', () => {
    expect(configErrorOf(() => parseRouterConfig(['--pairs', twoPairs, '--cache-entries-max', '0'], {}))).toContain('--cache-entries-max');
  });

  it('an unknown flag is refused, naming it', () => {
    expect(configErrorOf(() => parseRouterConfig(['--pairs', twoPairs, '--refresh-ms', '100'], {}))).toContain('unknown flag --refresh-ms');
  });

  it('a bad listen address or log level is refused', () => {
    expect(configErrorOf(() => parseRouterConfig(['--pairs', twoPairs, '--listen', 'nowhere'], {}))).toContain('--listen');
    expect(configErrorOf(() => parseRouterConfig(['--pairs', twoPairs, '--log-level', 'loud'], {}))).toContain('--log-level');
  });

  // Regression test (src/common/logger.ts:29, used by src/router/config.ts:64, fixed): isLogLevel
  // checks `value in levelRank`, which is true for Object.prototype names, so
  // "toString", "constructor" and "__proto__" pass as log levels. A logger
  // built with one compares against a function and logs every line.
  it.each(['toString', 'constructor', '__proto__'])('router config: log level "%s" is refused', (level) => {
    expect(configErrorOf(() => parseRouterConfig(['--pairs', twoPairs, '--log-level', level], {}))).toContain('--log-level');
  });

  it.each([
    ['TALLY_TLS_CERT', 'TALLY_TLS_CERT is set but empty'],
    ['TALLY_TLS_KEY', 'TALLY_TLS_KEY is set but empty'],
    ['TALLY_TLS_CA', 'TALLY_TLS_CA is set but empty'],
    ['TALLY_ADMIN_TOKEN_FILE', 'TALLY_ADMIN_TOKEN_FILE is set but empty'],
    ['TALLY_CLIENT_TOKEN_FILE', 'TALLY_CLIENT_TOKEN_FILE is set but empty'],
  ])('router config: an empty security setting (%s) is an error, not "unset"', (key, message) => {
    expect(configErrorOf(() => parseRouterConfig(['--pairs', '127.0.0.1:1,127.0.0.1:2'], { [key]: '' }))).toContain(message);
    expect(configErrorOf(() => parseRouterConfig(['--pairs', '127.0.0.1:1,127.0.0.1:2'], { [key]: '  ' }))).toContain(message);
  });

  it('an empty --tls-cert flag is an error too, and empty tokens are refused', () => {
    expect(configErrorOf(() => parseRouterConfig(['--pairs', '127.0.0.1:1,127.0.0.1:2', '--tls-cert', ''], {}))).toContain(
      '--tls-cert is set but empty',
    );
    expect(configErrorOf(() => parseRouterConfig(['--pairs', '127.0.0.1:1,127.0.0.1:2'], { TALLY_ADMIN_TOKEN: '' }))).toContain(
      'at least 16 characters',
    );
  });
  it('off loopback the router refuses to start without both tokens, unless told so explicitly', () => {
    const offLoopback = { TALLY_PAIRS: twoPairs, TALLY_LISTEN: '10.1.2.3:7000', TALLY_INSECURE: 'true' };
    const adminToken = 'a'.repeat(32);
    const clientToken = 'c'.repeat(32);
    expect(configErrorOf(() => parseRouterConfig([], offLoopback))).toMatch(/^refusing to serve 10\.1\.2\.3 \(--listen\) without tokens/);
    // One token is not enough: with only the admin token, CounterService would be reachable by anyone.
    expect(configErrorOf(() => parseRouterConfig([], { ...offLoopback, TALLY_ADMIN_TOKEN: adminToken }))).toMatch(/without a client token/);
    expect(configErrorOf(() => parseRouterConfig([], { ...offLoopback, TALLY_CLIENT_TOKEN: clientToken }))).toMatch(
      /without an admin token/,
    );
    // A name that only looks like loopback is not loopback.
    expect(configErrorOf(() => parseRouterConfig([], { ...offLoopback, TALLY_LISTEN: '127.evil.example:7000' }))).toMatch(
      /refusing to serve 127\.evil\.example/,
    );
    expect(parseRouterConfig([], { ...offLoopback, TALLY_ADMIN_TOKEN: adminToken, TALLY_CLIENT_TOKEN: clientToken }).listenAddress).toBe(
      '10.1.2.3:7000',
    );
    expect(parseRouterConfig(['--allow-unauthenticated'], offLoopback).allowUnauthenticated).toBe(true);
    expect(parseRouterConfig([], { ...offLoopback, TALLY_LISTEN: '127.0.0.2:7000' }).allowUnauthenticated).toBe(false);
  });
});

describe('router config: several routers on etcd', () => {
  const configOf = (...flags: string[]) => parseRouterConfig(['--pairs', twoPairs, ...flags], {});

  it('plaintext to etcd off loopback needs --insecure; TLS settings need https:// endpoints and --etcd', () => {
    expect(configErrorOf(() => configOf('--etcd', 'http://10.0.0.5:2379'))).toContain('refusing plaintext to etcd off loopback');
    expect(configOf('--etcd', 'http://10.0.0.5:2379', '--insecure').etcdEndpoints).toEqual(['http://10.0.0.5:2379']);
    expect(configOf('--etcd', 'http://127.0.0.1:2379').etcdTls).toBeUndefined();
    const tls = ['--etcd-tls-ca', 'ca.crt', '--etcd-tls-cert', 'c.crt', '--etcd-tls-key', 'c.key'];
    expect(configOf('--etcd', 'https://10.0.0.5:2379', ...tls).etcdTls).toEqual({ caFile: 'ca.crt', certFile: 'c.crt', keyFile: 'c.key' });
    expect(configErrorOf(() => configOf('--etcd', 'http://127.0.0.1:2379', ...tls))).toContain('use https:// endpoints');
    expect(configErrorOf(() => configOf(...tls))).toContain('--etcd-tls-* go with --etcd');
    expect(configErrorOf(() => configOf('--etcd', 'https://e:2379', '--etcd-tls-cert', 'c.crt', '--etcd-tls-key', 'c.key'))).toContain(
      'need --etcd-tls-ca',
    );
    expect(configErrorOf(() => configOf('--etcd', 'https://e:2379', '--etcd-tls-ca', 'ca.crt', '--etcd-tls-cert', 'c.crt'))).toContain(
      'go together',
    );
  });

  it('--etcd lists client URLs, trimmed; absent means the embedded directory', () => {
    expect(configOf().etcdEndpoints).toBeUndefined();
    expect(configOf('--etcd', ' http://127.0.0.1:2379 , https://[::1]:2380').etcdEndpoints).toEqual([
      'http://127.0.0.1:2379',
      'https://[::1]:2380',
    ]);
    expect(parseEtcdEndpoints(undefined)).toBeUndefined();
  });

  it.each([
    ['no scheme', '127.0.0.1:2379', 'entry 0'],
    ['another scheme', 'unix://etcd:2379', 'entry 0'],
    ['no port', 'http://etcd', 'entry 0'],
    ['a path', 'http://etcd:2379/v3', 'entry 0'],
    ['credentials', 'http://user:secret@etcd:2379', 'entry 0'],
    ['an empty entry', 'http://etcd:2379,', 'entry 1'],
  ])('router config: --etcd refuses an entry with %s and names it', (_label, value, entry) => {
    expect(configErrorOf(() => configOf('--etcd', value))).toContain(`--etcd ${entry} must be http://host:port or https://host:port`);
  });

  it('--etcd refuses an empty value, an endpoint named twice and more than etcdEndpointsMax', () => {
    expect(configErrorOf(() => configOf('--etcd', ' '))).toContain('--etcd is set but empty');
    expect(configErrorOf(() => parseRouterConfig(['--pairs', twoPairs], { TALLY_ETCD: '' }))).toContain('TALLY_ETCD is set but empty');
    expect(configErrorOf(() => configOf('--etcd', 'http://a:1,http://a:1'))).toContain('twice');
    const endpoints = (count: number) => Array.from({ length: count }, (_, index) => `http://etcd-${index}:2379`).join(',');
    expect(configOf('--etcd', endpoints(etcdEndpointsMax), '--insecure').etcdEndpoints).toHaveLength(etcdEndpointsMax);
    expect(configErrorOf(() => configOf('--etcd', endpoints(etcdEndpointsMax + 1)))).toContain(`limit is ${etcdEndpointsMax}`);
  });

  it('--etcd-prefix defaults to /tally/ and must end with "/"', () => {
    expect(configOf().etcdPrefix).toBe('/tally/');
    expect(configOf('--etcd-prefix', '/staging/').etcdPrefix).toBe('/staging/');
    expect(configErrorOf(() => configOf('--etcd-prefix', '/staging'))).toContain('--etcd-prefix must end with "/"');
    expect(configErrorOf(() => configOf('--etcd-prefix', '/a\nb/'))).toContain('--etcd-prefix');
    expect(configErrorOf(() => configOf('--etcd-prefix', ''))).toContain('--etcd-prefix is set but empty');
  });

  it('--router-id defaults to <host name>:<listen port>, the same at every restart (not the pid)', () => {
    expect(configOf('--listen', '127.0.0.1:7000').routerId).toBe(`${os.hostname()}:7000`);
    expect(defaultRouterId('10.0.0.5:50051', 'box')).toBe('box:50051');
    // Two containers listening on 0.0.0.0:50051 differ by host name (a pod's is its name).
    expect(defaultRouterId('0.0.0.0:50051', 'router-1')).toBe('router-1:50051');
    expect(defaultRouterId('[::]:50051', 'router-2')).toBe('router-2:50051');
    expect(defaultRouterId(':50051', 'router-3')).toBe('router-3:50051');
    const started = (): string =>
      parseRouterConfig(['--listen', '0.0.0.0:7000', '--insecure', '--allow-unauthenticated'], { TALLY_PAIRS: twoPairs }).routerId;
    expect(started()).toBe(`${os.hostname()}:7000`);
    expect(started()).not.toContain(String(process.pid));
  });

  it('--router-id is one etcd key segment: printable, no spaces or "/", at most routerIdBytesMax bytes', () => {
    expect(configOf('--router-id', 'router-a').routerId).toBe('router-a');
    expect(configOf('--router-id', 'r'.repeat(routerIdBytesMax)).routerId).toHaveLength(routerIdBytesMax);
    for (const bad of ['router/a', 'router a', 'routér', 'r'.repeat(routerIdBytesMax + 1)]) {
      expect(configErrorOf(() => configOf('--router-id', bad))).toContain('--router-id must be');
    }
    expect(configErrorOf(() => configOf('--router-id', ''))).toContain('--router-id is set but empty');
  });

  it('--router-lease-ttl-ms is whole seconds between routerLeaseTtlMsMin and routerLeaseTtlMsMax', () => {
    expect(configOf().routerLeaseTtlMs).toBe(5_000);
    expect(configOf('--router-lease-ttl-ms', String(routerLeaseTtlMsMin)).routerLeaseTtlMs).toBe(routerLeaseTtlMsMin);
    expect(configOf('--router-lease-ttl-ms', String(routerLeaseTtlMsMax)).routerLeaseTtlMs).toBe(routerLeaseTtlMsMax);
    expect(configErrorOf(() => configOf('--router-lease-ttl-ms', '999'))).toContain('--router-lease-ttl-ms must be between');
    expect(configErrorOf(() => configOf('--router-lease-ttl-ms', String(routerLeaseTtlMsMax + 1_000)))).toContain('--router-lease-ttl-ms');
    expect(configErrorOf(() => configOf('--router-lease-ttl-ms', '2500'))).toContain('--router-lease-ttl-ms must be whole seconds');
    expect(configErrorOf(() => parseRouterConfig(['--pairs', twoPairs], { TALLY_ROUTER_LEASE_TTL_MS: '1s' }))).toContain(
      'TALLY_ROUTER_LEASE_TTL_MS',
    );
  });
});
