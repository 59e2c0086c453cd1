// Unit tests for the router's parseRouterConfig and parsePairs: defaults,
// environment keys mirroring flags, and startup errors that name the key.
import { describe, expect, it } from 'vitest';
import { counterTtlMsMax, counterTtlMsMin, pairsMax } from '../../src/common/limits.ts';
import { parsePairs, parseRouterConfig, routerDefaults } from '../../src/router/config.ts';
import { configErrorOf, envKeyOf } from '../helpers/config.ts';

const twoPairs = 'n1:1,n2:2;n3:3,n4:4';

describe('router config: parsePairs', () => {
  it('router config: parsePairs reads primary,follower pairs separated by ";" and trims members', () => {
    expect(parsePairs(' n1:1 , n2:2 ;n3:3,n4:4')).toEqual([
      { primary: 'n1:1', follower: 'n2:2' },
      { primary: 'n3:3', follower: 'n4:4' },
    ]);
  });

  it('router config: parsePairs requires a value', () => {
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

  it('router config: parsePairs rejects a node named twice, within or across pairs', () => {
    expect(configErrorOf(() => parsePairs('n1:1,n1:1'))).toContain('twice');
    expect(configErrorOf(() => parsePairs('n1:1,n2:2;n3:3,n1:1'))).toContain('twice');
  });

  it('router config: parsePairs accepts pairsMax pairs and rejects one more', () => {
    const pairsText = (count: number): string => Array.from({ length: count }, (_, index) => `p${index}:1,f${index}:1`).join(';');
    expect(parsePairs(pairsText(pairsMax))).toHaveLength(pairsMax);
    expect(configErrorOf(() => parsePairs(pairsText(pairsMax + 1)))).toContain(`limit is ${pairsMax}`);
  });
});

describe('router config: parseRouterConfig', () => {
  it('router config: with only --pairs every other setting is its default', () => {
    expect(parseRouterConfig(['--pairs', twoPairs], {})).toEqual({
      ...routerDefaults,
      pairs: parsePairs(twoPairs),
    });
    expect(routerDefaults.refreshIntervalMs).toBe(1_000);
  });

  it('router config: every numeric setting is read from the TALLY_ environment key that mirrors its name', () => {
    // refreshIntervalMs <-> TALLY_REFRESH_INTERVAL_MS: a setting whose key does not mirror its name fails here.
    const numericKeys = Object.keys(routerDefaults).filter((key) => typeof routerDefaults[key as keyof typeof routerDefaults] === 'number');
    expect(numericKeys).toContain('refreshIntervalMs');
    const env: Record<string, string> = { TALLY_PAIRS: twoPairs };
    // The default TTL is 0 (none) or at least counterTtlMsMin: 1 is no TTL at all.
    const valueOf = (key: string): number =>
      key === 'counterTtlMs' ? counterTtlMsMin : (routerDefaults[key as keyof typeof routerDefaults] as number) + 1;
    for (const key of numericKeys) env[envKeyOf(key)] = String(valueOf(key));
    const config = parseRouterConfig([], env) as unknown as Record<string, unknown>;
    for (const key of numericKeys) expect({ key, value: config[key] }).toEqual({ key, value: valueOf(key) });
  });

  it('router config: string settings are read from TALLY_ environment keys', () => {
    const config = parseRouterConfig([], {
      TALLY_PAIRS: twoPairs,
      TALLY_LISTEN: '0.0.0.0:7000',
      TALLY_DATA_DIR: '/var/tally',
      TALLY_METRICS_HOST: '0.0.0.0',
      TALLY_LOG_LEVEL: 'debug',
      // Off loopback without TLS or tokens needs both explicit opt-ins.
      TALLY_INSECURE: 'true',
      TALLY_ALLOW_UNAUTHENTICATED: 'true',
    });
    expect(config).toMatchObject({
      listenAddress: '0.0.0.0:7000',
      pairs: parsePairs(twoPairs),
      dataDir: '/var/tally',
      metricsHost: '0.0.0.0',
      logLevel: 'debug',
    });
  });

  it('router config: a flag beats its environment key', () => {
    const config = parseRouterConfig(['--pairs', twoPairs, '--refresh-interval-ms=50'], { TALLY_REFRESH_INTERVAL_MS: '250' });
    expect(config.refreshIntervalMs).toBe(50);
  });

  it('router config: missing --pairs fails at startup', () => {
    expect(configErrorOf(() => parseRouterConfig([], {}))).toContain('--pairs');
  });

  it('router config: an out-of-range refresh interval names the flag or the environment key it came from', () => {
    expect(configErrorOf(() => parseRouterConfig(['--pairs', twoPairs, '--refresh-interval-ms', '5'], {}))).toContain(
      '--refresh-interval-ms',
    );
    expect(configErrorOf(() => parseRouterConfig(['--pairs', twoPairs], { TALLY_REFRESH_INTERVAL_MS: '5' }))).toContain(
      'TALLY_REFRESH_INTERVAL_MS',
    );
  });

  it('router config: --counter-ttl-ms is 0 (no default TTL) or counterTtlMsMin..counterTtlMsMax', () => {
    const ttlOf = (value: string): number => parseRouterConfig(['--pairs', twoPairs, '--counter-ttl-ms', value], {}).counterTtlMs;
    expect(routerDefaults.counterTtlMs).toBe(0);
    expect(ttlOf('0')).toBe(0);
    expect(ttlOf(String(counterTtlMsMin))).toBe(counterTtlMsMin);
    expect(ttlOf(String(counterTtlMsMax))).toBe(counterTtlMsMax);
    expect(configErrorOf(() => ttlOf('999'))).toContain('--counter-ttl-ms must be 0 (no default) or at least 1000');
    expect(configErrorOf(() => ttlOf(String(counterTtlMsMax + 1)))).toContain('--counter-ttl-ms');
    expect(configErrorOf(() => ttlOf('7d'))).toContain('--counter-ttl-ms');
  });

  it('router config: a cache of zero entries is refused', () => {
    expect(configErrorOf(() => parseRouterConfig(['--pairs', twoPairs, '--cache-entries-max', '0'], {}))).toContain('--cache-entries-max');
  });

  it('router config: an unknown flag is refused, naming it', () => {
    expect(configErrorOf(() => parseRouterConfig(['--pairs', twoPairs, '--refresh-ms', '100'], {}))).toContain('unknown flag --refresh-ms');
  });

  it('router config: a bad listen address or log level is refused', () => {
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

  it('router config: an empty --tls-cert flag is an error too, and empty tokens are refused', () => {
    expect(configErrorOf(() => parseRouterConfig(['--pairs', '127.0.0.1:1,127.0.0.1:2', '--tls-cert', ''], {}))).toContain(
      '--tls-cert is set but empty',
    );
    expect(configErrorOf(() => parseRouterConfig(['--pairs', '127.0.0.1:1,127.0.0.1:2'], { TALLY_ADMIN_TOKEN: '' }))).toContain(
      'at least 16 characters',
    );
  });
  it('router config: off loopback the router refuses to start without both tokens, unless told so explicitly', () => {
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
