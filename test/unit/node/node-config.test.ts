// Unit tests for the shard node's parseNodeConfig: defaults, environment keys
// mirroring flags, and startup errors that name the key.
import { describe, expect, it } from 'vitest';
import { nodeDefaults, parseNodeConfig } from '../../../src/node/config.ts';
import { dedupKeysInMemoryMax } from '../../../src/common/index.ts';
import { configErrorOf, envKeyOf } from '../../helpers/config.ts';

type NodeDefaultKey = keyof typeof nodeDefaults;
const numericKeys = (Object.keys(nodeDefaults) as NodeDefaultKey[]).filter((key) => typeof nodeDefaults[key] === 'number');

describe('node config: parseNodeConfig', () => {
  it('with no flags every setting is its default and the node is named by its listen address', () => {
    expect(parseNodeConfig([], {})).toEqual({ ...nodeDefaults, nodeName: nodeDefaults.listenAddress });
    expect(nodeDefaults.logLevel).toBe('info');
  });

  it('the dedup window defaults to 24 hours (G2)', () => {
    expect(parseNodeConfig([], {}).dedupWindowMs).toBe(24 * 60 * 60 * 1000);
  });

  it('the node name follows a configured listen address unless set', () => {
    expect(parseNodeConfig(['--listen', '127.0.0.1:7001'], {}).nodeName).toBe('127.0.0.1:7001');
    expect(parseNodeConfig(['--listen', '127.0.0.1:7001', '--node-name', 'n1'], {}).nodeName).toBe('n1');
  });

  it('every numeric setting is read from the TALLY_ environment key that mirrors its name', () => {
    expect(numericKeys).toContain('dedupWindowMs');
    const env: Record<string, string> = {};
    for (const key of numericKeys) env[envKeyOf(key)] = String((nodeDefaults[key] as number) + 1);
    const config = parseNodeConfig([], env) as unknown as Record<string, unknown>;
    for (const key of numericKeys) expect({ key, value: config[key] }).toEqual({ key, value: (nodeDefaults[key] as number) + 1 });
  });

  it('string settings come from TALLY_ environment keys, and flags beat them', () => {
    const env = {
      TALLY_LISTEN: '127.0.0.1:7002',
      TALLY_DATA_DIR: '/var/node',
      TALLY_LOG_LEVEL: 'warn',
      TALLY_DEDUP_WINDOW_MS: '60000',
    };
    expect(parseNodeConfig([], env)).toMatchObject({
      listenAddress: '127.0.0.1:7002',
      nodeName: '127.0.0.1:7002',
      dataDir: '/var/node',
      logLevel: 'warn',
      dedupWindowMs: 60_000,
    });
    const withFlags = parseNodeConfig(['--data-dir', '/srv/node', '--dedup-window-ms=120000'], env);
    expect(withFlags.dataDir).toBe('/srv/node');
    expect(withFlags.dedupWindowMs).toBe(120_000);
  });

  it('a dedup window below one second names the flag or environment key it came from', () => {
    expect(configErrorOf(() => parseNodeConfig(['--dedup-window-ms', '999'], {}))).toContain('--dedup-window-ms');
    expect(configErrorOf(() => parseNodeConfig([], { TALLY_DEDUP_WINDOW_MS: '999' }))).toContain('TALLY_DEDUP_WINDOW_MS');
  });

  it('keys held in memory default to the limit in limits.ts, come from flag or environment, and are at least one', () => {
    expect(parseNodeConfig([], {}).dedupKeysInMemoryMax).toBe(dedupKeysInMemoryMax);
    expect(parseNodeConfig(['--dedup-keys-in-memory-max', '500'], {}).dedupKeysInMemoryMax).toBe(500);
    expect(parseNodeConfig([], { TALLY_DEDUP_KEYS_IN_MEMORY_MAX: '200' }).dedupKeysInMemoryMax).toBe(200);
    expect(configErrorOf(() => parseNodeConfig(['--dedup-keys-in-memory-max', '0'], {}))).toContain('--dedup-keys-in-memory-max');
    expect(configErrorOf(() => parseNodeConfig([], { TALLY_DEDUP_KEYS_IN_MEMORY_MAX: 'many' }))).toContain(
      'TALLY_DEDUP_KEYS_IN_MEMORY_MAX',
    );
  });

  it('metrics port and shutdown timeout are bounded', () => {
    expect(configErrorOf(() => parseNodeConfig(['--metrics-port', '70000'], {}))).toContain('--metrics-port');
    expect(configErrorOf(() => parseNodeConfig([], { TALLY_SHUTDOWN_TIMEOUT_MS: '99' }))).toContain('TALLY_SHUTDOWN_TIMEOUT_MS');
  });

  it('an unknown flag or a bad listen address is refused', () => {
    expect(configErrorOf(() => parseNodeConfig(['--datadir', 'x'], {}))).toContain('unknown flag --datadir');
    expect(configErrorOf(() => parseNodeConfig(['--listen', '127.0.0.1'], {}))).toContain('--listen');
  });
});
