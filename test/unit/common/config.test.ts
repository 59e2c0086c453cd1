// Unit tests for the shared config parsing: flags, the flag > env > default
// order, errors that name the key, and host:port addresses.
import { describe, expect, it } from 'vitest';
import { ConfigReader, parseAddress, parseFlags } from '../../../src/common/index.ts';
import { configErrorOf } from '../../helpers/config.ts';

const bounds = { min: 10, max: 1_000 };

describe('config: parseFlags', () => {
  it('parseFlags reads "--name value" and "--name=value"', () => {
    const flags = parseFlags(['--data-dir', '/tmp/x', '--listen=127.0.0.1:1']);
    expect(Object.fromEntries(flags)).toEqual({ 'data-dir': '/tmp/x', listen: '127.0.0.1:1' });
  });

  it('parseFlags keeps everything after the first "=" as the value', () => {
    expect(parseFlags(['--pairs=a:1,b:2;c=3']).get('pairs')).toBe('a:1,b:2;c=3');
    expect(parseFlags(['--name=']).get('name')).toBe('');
  });

  it('parseFlags treats a declared boolean flag as "true" without consuming the next argument', () => {
    const flags = parseFlags(['--verbose', '--level', '3'], ['verbose']);
    expect(Object.fromEntries(flags)).toEqual({ verbose: 'true', level: '3' });
  });

  it('parseFlags rejects a flag with no value and a bare positional argument', () => {
    expect(configErrorOf(() => parseFlags(['--listen']))).toContain('--listen');
    expect(configErrorOf(() => parseFlags(['serve']))).toContain('"serve"');
    expect(configErrorOf(() => parseFlags(['-v']))).toContain('"-v"');
  });
});

describe('config: ConfigReader', () => {
  it('a flag beats the environment, which beats the default', () => {
    const env = { TALLY_REFRESH_INTERVAL_MS: '200' };
    expect(new ConfigReader(parseFlags(['--refresh-interval-ms', '300']), env).int('refresh-interval-ms', 100, bounds)).toBe(300);
    expect(new ConfigReader(parseFlags([]), env).int('refresh-interval-ms', 100, bounds)).toBe(200);
    expect(new ConfigReader(parseFlags([]), {}).int('refresh-interval-ms', 100, bounds)).toBe(100);
  });

  it('an empty environment value counts as unset', () => {
    expect(new ConfigReader(new Map(), { TALLY_DATA_DIR: '' }).string('data-dir', './data')).toBe('./data');
  });

  it('a bad flag value gives a ConfigError naming the flag', () => {
    const reader = new ConfigReader(parseFlags(['--refresh-interval-ms', 'soon']), { TALLY_REFRESH_INTERVAL_MS: '200' });
    const message = configErrorOf(() => reader.int('refresh-interval-ms', 100, bounds));
    expect(message).toContain('--refresh-interval-ms');
    expect(message).toContain('"soon"');
  });

  it('a bad environment value gives a ConfigError naming the environment key', () => {
    const reader = new ConfigReader(new Map(), { TALLY_REFRESH_INTERVAL_MS: '1.5' });
    expect(configErrorOf(() => reader.int('refresh-interval-ms', 100, bounds))).toContain('TALLY_REFRESH_INTERVAL_MS');
  });

  it.each(['-5', '1.5', '1e3', '0x10', ' 50', 'abc'])('config: int rejects "%s" as not a whole number', (value) => {
    const reader = new ConfigReader(new Map([['n', value]]), {});
    expect(configErrorOf(() => reader.int('n', 100, bounds))).toContain('whole number');
  });

  it('int enforces its bounds inclusively and names the key when out of them', () => {
    const read = (value: string): number => new ConfigReader(new Map([['n', value]]), {}).int('n', 100, bounds);
    expect(read('10')).toBe(10);
    expect(read('1000')).toBe(1_000);
    expect(configErrorOf(() => read('9'))).toContain('--n must be between 10 and 1000');
    expect(configErrorOf(() => read('1001'))).toContain('--n');
  });

  it('bool accepts true/false/1/0 only', () => {
    const read = (value: string): boolean => new ConfigReader(new Map([['on', value]]), {}).bool('on', false);
    expect(read('true')).toBe(true);
    expect(read('1')).toBe(true);
    expect(read('false')).toBe(false);
    expect(read('0')).toBe(false);
    expect(configErrorOf(() => read('yes'))).toContain('--on');
    expect(new ConfigReader(new Map(), { TALLY_ON: 'true' }).bool('on', false)).toBe(true);
  });

  it('oneOf accepts only the listed values and names the key otherwise', () => {
    const allowed = ['primary', 'follower'] as const;
    expect(new ConfigReader(new Map(), { TALLY_ROLE: 'follower' }).oneOf('role', 'primary', allowed)).toBe('follower');
    const message = configErrorOf(() => new ConfigReader(new Map(), { TALLY_ROLE: 'leader' }).oneOf('role', 'primary', allowed));
    expect(message).toContain('TALLY_ROLE');
    expect(message).toContain('"leader"');
  });

  it('metricsPort takes a port, 0 (off) or "any", and names the key otherwise', () => {
    expect(new ConfigReader(parseFlags(['--metrics-port', '9465']), {}).metricsPort('metrics-port', 0)).toBe(9465);
    expect(new ConfigReader(parseFlags(['--metrics-port', '0']), {}).metricsPort('metrics-port', 9464)).toBe(0);
    expect(new ConfigReader(new Map(), { TALLY_METRICS_PORT: 'any' }).metricsPort('metrics-port', 0)).toBe('any');
    expect(new ConfigReader(new Map(), {}).metricsPort('metrics-port', 'any')).toBe('any');
    expect(configErrorOf(() => new ConfigReader(parseFlags(['--metrics-port', '65536']), {}).metricsPort('metrics-port', 0))).toContain(
      '--metrics-port',
    );
    expect(configErrorOf(() => new ConfigReader(new Map(), { TALLY_METRICS_PORT: 'some' }).metricsPort('metrics-port', 0))).toContain(
      'TALLY_METRICS_PORT',
    );
  });

  it('rejectUnknownFlags names a flag that no setting read', () => {
    const reader = new ConfigReader(parseFlags(['--data-dir', 'x', '--refresh-intervl-ms', '5']), {});
    reader.string('data-dir', '.');
    reader.int('refresh-interval-ms', 100, bounds);
    expect(configErrorOf(() => reader.rejectUnknownFlags())).toContain('--refresh-intervl-ms');
  });

  it('rejectUnknownFlags passes when every flag was read, and ignores unknown environment keys', () => {
    const reader = new ConfigReader(parseFlags(['--data-dir', 'x']), { TALLY_SOMETHING_ELSE: '1' });
    reader.string('data-dir', '.');
    expect(() => reader.rejectUnknownFlags()).not.toThrow();
  });
});

describe('config: parseAddress', () => {
  it('parseAddress splits host and port at the last colon', () => {
    expect(parseAddress('127.0.0.1:50051', 'x')).toEqual({ host: '127.0.0.1', port: 50051 });
    expect(parseAddress('[::1]:7000', 'x')).toEqual({ host: '[::1]', port: 7000 });
    expect(parseAddress(':80', 'x')).toEqual({ host: '', port: 80 });
    expect(parseAddress('h:0', 'x')).toEqual({ host: 'h', port: 0 });
    expect(parseAddress('h:65535', 'x')).toEqual({ host: 'h', port: 65535 });
  });

  it.each(['localhost', 'h:65536', 'h:-1', 'h:abc', 'h:1.5'])('config: parseAddress rejects "%s" naming the setting', (value) => {
    expect(configErrorOf(() => parseAddress(value, '--listen'))).toContain('--listen must be host:port');
  });

  // Regression test (src/common/config.ts:98, fixed): the port is parsed with Number(), which
  // reads '' as 0, so "host:" (no port at all) is accepted as port 0.
  it('parseAddress rejects an address with an empty port', () => {
    expect(configErrorOf(() => parseAddress('127.0.0.1:', '--listen'))).toContain('--listen');
  });

  // Regression test (src/common/config.ts:98, fixed): Number() also accepts hex, exponents,
  // a fraction of zero and surrounding spaces: "h:0x50" is port 80,
  // "h:1e3" is port 1000, "h:80.0" and "h: 80" are port 80.
  it.each(['h:0x50', 'h:1e3', 'h:80.0', 'h: 80'])('config: parseAddress rejects the non-decimal port in "%s"', (value) => {
    expect(configErrorOf(() => parseAddress(value, '--listen'))).toContain('--listen');
  });
});
