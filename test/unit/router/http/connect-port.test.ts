// The HTTP port's settings, and return_total / total in the lean codec: the
// bytes protobufjs (the gRPC port's reference) writes and reads, both ways.
import { describe, expect, it } from 'vitest';
import { parseCorsOrigins, parseRouterConfig } from '../../../../src/router/config.ts';
import { counterServiceDefinition } from '../../../../src/common/index.ts';
import {
  decodeIncrementBatchResponse,
  decodeIncrementRequest,
  decodeIncrementResponse,
  encodeIncrementBatchResponse,
  encodeIncrementRequest,
  encodeIncrementResponse,
  encodeIncrementStreamResponse,
  decodeIncrementStreamResponse,
} from '../../../../src/wire/index.ts';
import { configErrorOf } from '../../../helpers/config.ts';

const pairs = '127.0.0.1:1,127.0.0.1:2';
const reference = counterServiceDefinition.Increment!;

describe('connect port: settings', () => {
  it('--http-port is off by default, a port, or any; TALLY_HTTP_PORT too', () => {
    expect(parseRouterConfig(['--pairs', pairs], {}).httpPort).toBe(0);
    expect(parseRouterConfig(['--pairs', pairs, '--http-port', '8080'], {}).httpPort).toBe(8080);
    expect(parseRouterConfig(['--pairs', pairs, '--http-port', 'any'], {}).httpPort).toBe('any');
    expect(parseRouterConfig(['--pairs', pairs], { TALLY_HTTP_PORT: '9000' }).httpPort).toBe(9000);
    expect(configErrorOf(() => parseRouterConfig(['--pairs', pairs, '--http-port', 'eighty'], {}))).toMatch(/--http-port/);
  });

  it('--http-cors-origins takes origins or *, and refuses anything a browser would never send as Origin', () => {
    expect(parseCorsOrigins('')).toEqual([]);
    expect(parseCorsOrigins('https://app.example.com, http://localhost:3000')).toEqual([
      'https://app.example.com',
      'http://localhost:3000',
    ]);
    expect(parseCorsOrigins('*')).toEqual(['*']);
    expect(parseRouterConfig(['--pairs', pairs], { TALLY_HTTP_CORS_ORIGINS: 'https://a.example' }).httpCorsOrigins).toEqual([
      'https://a.example',
    ]);
    for (const bad of [
      'https://app.example.com/',
      'app.example.com',
      'https://app.example.com/path',
      'ftp://files.example',
      'https://a.example,',
    ]) {
      expect(
        configErrorOf(() => parseCorsOrigins(bad)),
        bad,
      ).toMatch(/^--http-cors-origins entry \d+ must be an origin/);
    }
  });
});

describe('connect port: return_total and total in the lean codec', () => {
  it('return_total: written when true (false is the default, left out), read as protobufjs reads it', () => {
    for (const returnTotal of [true, false, undefined]) {
      const lean = encodeIncrementRequest({ counter: 'c', amount: 1, ...(returnTotal === undefined ? {} : { returnTotal }) });
      const full = reference.requestSerialize({ counter: 'c', amount: 1, ...(returnTotal === undefined ? {} : { returnTotal }) });
      // protobufjs writes an explicit false too; proto3 leaves a default out: both read the same.
      if (returnTotal !== false) expect([...lean]).toEqual([...full]);
      expect(decodeIncrementRequest(lean).returnTotal).toBe(returnTotal === true);
      expect(decodeIncrementRequest(full).returnTotal).toBe(returnTotal === true);
      expect((reference.requestDeserialize(lean) as { returnTotal?: boolean }).returnTotal).toBe(returnTotal === true);
    }
    // Any non-zero varint is true, as protobufjs reads a bool.
    expect(decodeIncrementRequest(Buffer.from([0x20, 0x02])).returnTotal).toBe(true);
  });

  it('total: present (0 and int64 extremes too) or absent, the same bytes as protobufjs, and read back exactly', () => {
    for (const total of [0n, 1n, -1n, 2n ** 53n + 1n, 9223372036854775807n, -9223372036854775808n]) {
      const lean = encodeIncrementResponse({ applied: true, shard: 3, total });
      expect([...lean]).toEqual([...reference.responseSerialize({ applied: true, shard: 3, total: total.toString() })]);
      expect(decodeIncrementResponse(lean)).toEqual({ applied: true, shard: 3, total: total.toString() });
      expect((reference.responseDeserialize(lean) as { total?: string }).total).toBe(total.toString());
    }
    expect(decodeIncrementResponse(encodeIncrementResponse({ applied: true, shard: 1 }))).toEqual({ applied: true, shard: 1 });
  });

  it('a batch of results with and without totals, and a stream answer with its sequence after them', () => {
    const results = [
      { applied: true, shard: 0, total: 5n },
      { applied: false, shard: 2 },
      { applied: true, shard: 1, total: -(2n ** 60n) },
    ];
    const batch = decodeIncrementBatchResponse(encodeIncrementBatchResponse({ results }));
    expect(batch.results).toEqual([
      { applied: true, shard: 0, total: '5' },
      { applied: false, shard: 2 },
      { applied: true, shard: 1, total: String(-(2n ** 60n)) },
    ]);
    // The sequence number is written after results whose totals used the same scratch halves.
    const stream = decodeIncrementStreamResponse(encodeIncrementStreamResponse({ results, sequence: 2n ** 40n + 7n, error: null }));
    expect(stream.sequence).toBe(2 ** 40 + 7);
    expect(stream.results.map((result) => result.total)).toEqual(['5', undefined, String(-(2n ** 60n))]);
  });
});
