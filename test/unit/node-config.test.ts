// Unit tests for the shard node's parseNodeConfig: defaults, environment keys
// mirroring flags, and startup errors that name the key.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/common/config.ts';
import { nodeDefaults, parseNodeConfig } from '../../src/node/config.ts';

function configErrorOf(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error('expected a ConfigError, but nothing was thrown');
}

describe('node config: parseNodeConfig', () => {
  it('node config: with no flags every setting is its default and the node is named by its listen address', () => {
    expect(parseNodeConfig([], {})).toEqual({
      listenAddress: nodeDefaults.listenAddress,
      dataDir: nodeDefaults.dataDir,
      metricsHost: nodeDefaults.metricsHost,
      metricsPort: nodeDefaults.metricsPort,
      nodeName: nodeDefaults.listenAddress,
      logLevel: 'info',
      shutdownTimeoutMs: nodeDefaults.shutdownTimeoutMs,
      role: 'primary',
    });
  });

  it('node config: the node name follows a configured listen address unless set', () => {
    expect(parseNodeConfig(['--listen', '127.0.0.1:7001'], {}).nodeName).toBe('127.0.0.1:7001');
    expect(parseNodeConfig(['--listen', '127.0.0.1:7001', '--node-name', 'n1'], {}).nodeName).toBe('n1');
  });

  it('node config: settings come from TALLY_ environment keys, and flags beat them', () => {
    const env = {
      TALLY_LISTEN: '127.0.0.1:7002',
      TALLY_DATA_DIR: '/var/node',
      TALLY_METRICS_PORT: '9500',
      TALLY_ROLE: 'follower',
      TALLY_SHUTDOWN_TIMEOUT_MS: '1000',
      TALLY_LOG_LEVEL: 'warn',
    };
    const fromEnv = parseNodeConfig([], env);
    expect(fromEnv).toMatchObject({
      listenAddress: '127.0.0.1:7002',
      dataDir: '/var/node',
      metricsPort: 9500,
      role: 'follower',
      shutdownTimeoutMs: 1_000,
      logLevel: 'warn',
    });
    const withFlags = parseNodeConfig(['--role', 'primary', '--shutdown-timeout-ms=200'], env);
    expect(withFlags.role).toBe('primary');
    expect(withFlags.shutdownTimeoutMs).toBe(200);
  });

  it('node config: a role other than primary or follower names its key', () => {
    expect(configErrorOf(() => parseNodeConfig(['--role', 'leader'], {}))).toContain('--role');
    expect(configErrorOf(() => parseNodeConfig([], { TALLY_ROLE: 'leader' }))).toContain('TALLY_ROLE');
  });

  it('node config: metrics port and shutdown timeout are bounded', () => {
    expect(configErrorOf(() => parseNodeConfig(['--metrics-port', '70000'], {}))).toContain('--metrics-port');
    expect(configErrorOf(() => parseNodeConfig([], { TALLY_SHUTDOWN_TIMEOUT_MS: '99' }))).toContain('TALLY_SHUTDOWN_TIMEOUT_MS');
  });

  it('node config: an unknown flag or a bad listen address is refused', () => {
    expect(configErrorOf(() => parseNodeConfig(['--datadir', 'x'], {}))).toContain('unknown flag --datadir');
    expect(configErrorOf(() => parseNodeConfig(['--listen', '127.0.0.1'], {}))).toContain('--listen');
  });
});
