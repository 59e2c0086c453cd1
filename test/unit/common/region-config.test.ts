// --region and --peer-regions: every mistake is one line naming the flag;
// and the RegionPart bytes the lean ReadMany encoder appends read back.
import { describe, expect, it } from 'vitest';
import { ConfigError, checkRegionName, parsePeerRegions } from '../../../src/common/index.ts';
import { decodeRegionPart, encodeRegionPart } from '../../../src/wire/index.ts';
import { decodeComponent, encodeComponent } from '../../../src/wire/internal/index.ts';
import { parseRouterConfig } from '../../../src/router/config.ts';
import { parseLauncherConfig } from '../../../src/cluster/launcher-config.ts';

describe('region config', () => {
  it('config: --peer-regions parses NAME=HOST:PORT[,HOST:PORT][;NAME=...]', () => {
    expect(parsePeerRegions('us=127.0.0.1:50061,10.0.0.2:50051;ap=ap.example:443', 'eu')).toEqual([
      { name: 'us', addresses: ['127.0.0.1:50061', '10.0.0.2:50051'] },
      { name: 'ap', addresses: ['ap.example:443'] },
    ]);
    expect(parsePeerRegions('', 'eu')).toEqual([]);
  });

  it.each([
    ['us=127.0.0.1:1', '', '--peer-regions needs --region'],
    ['eu=127.0.0.1:1', 'eu', 'names this region (eu) as its own peer'],
    ['us=127.0.0.1:1;us=127.0.0.1:2', 'eu', 'names region us twice'],
    ['us', 'eu', 'must be NAME=HOST:PORT'],
    ['US=127.0.0.1:1', 'eu', '--peer-regions region name must be'],
    ['us=no-port', 'eu', '--peer-regions us'],
  ])('config: --peer-regions %s (region %s) is refused: %s', (value, region, message) => {
    expect(() => parsePeerRegions(value, region)).toThrow(ConfigError);
    expect(() => parsePeerRegions(value, region)).toThrow(message);
  });

  it('config: a region name is lower-case letters, digits and -, from a letter', () => {
    expect(checkRegionName('eu-west-1')).toBe('eu-west-1');
    expect(() => checkRegionName('1eu')).toThrow('--region must be');
    expect(() => checkRegionName('e'.repeat(33))).toThrow('--region must be');
  });

  it('config: the router takes --region, --peer-regions and TALLY_REGION', () => {
    const config = parseRouterConfig(['--pairs', '127.0.0.1:1,127.0.0.1:2', '--peer-regions', 'us=127.0.0.1:50061'], {
      TALLY_REGION: 'eu',
    });
    expect(config.region).toBe('eu');
    expect(config.peerRegions).toEqual([{ name: 'us', addresses: ['127.0.0.1:50061'] }]);
    expect(() =>
      parseRouterConfig(['--pairs', '127.0.0.1:1,127.0.0.1:2', '--region', 'eu', '--peer-regions', 'eu=127.0.0.1:1'], {}),
    ).toThrow('its own peer');
  });

  it('config: --region-tombstone-retention-ms defaults to 7 days, takes TALLY_REGION_TOMBSTONE_RETENTION_MS, and refuses less than a minute', () => {
    const pairs = ['--pairs', '127.0.0.1:1,127.0.0.1:2'];
    expect(parseRouterConfig(pairs, {}).regionTombstoneRetentionMs).toBe(7 * 24 * 60 * 60 * 1000);
    expect(parseRouterConfig(pairs, { TALLY_REGION_TOMBSTONE_RETENTION_MS: '3600000' }).regionTombstoneRetentionMs).toBe(3_600_000);
    expect(() => parseRouterConfig([...pairs, '--region-tombstone-retention-ms', '5'], {})).toThrow('--region-tombstone-retention-ms');
  });

  it('config: npm start takes --region and --peer-regions for its children, and refuses a bad list before any child starts', () => {
    const config = parseLauncherConfig(['--region', 'eu', '--peer-regions', 'us=127.0.0.1:51051'], {});
    expect([config.region, config.peerRegions]).toEqual(['eu', 'us=127.0.0.1:51051']);
    expect(() => parseLauncherConfig(['--peer-regions', 'us=127.0.0.1:51051'], {})).toThrow('--peer-regions needs --region');
    expect(() => parseLauncherConfig(['--region', 'EU'], {})).toThrow('--region must be');
  });

  it('codec: a region part and a component read back as written, negative totals included', () => {
    const part = { region: 'us', total: -42n, asOfUnixMs: 1_700_000_000_000n, stalenessMs: 250n, home: false };
    expect(decodeRegionPart(encodeRegionPart(part))).toEqual(part);
    const component = { origin: 'ap', version: { term: 7n, round: 3n }, total: -5n, asOfUnixMs: 12, generation: 3 };
    expect(decodeComponent(encodeComponent(component))).toEqual(component);
    expect(() => decodeComponent(encodeComponent(component).subarray(0, 10))).toThrow('cut short');
  });
});
