// Unit tests for ListCounters' pure parts: the page token (what it accepts
// and what it refuses), the end of a prefix's range, and page size bounds.
import { describe, expect, it } from 'vitest';
import { decodePageToken, encodePageToken, prefixEnd, validatePageSize } from '../../../../src/router/counters/list.ts';
import { listPageSizeDefault } from '../../../../src/common/index.ts';
import { listPageSizeMax } from '../../../../src/wire/index.ts';
import { codeOf } from '../../../helpers/rejection.ts';

const byteCompare = (left: string, right: string): number => Buffer.compare(Buffer.from(left), Buffer.from(right));

describe('counter list', () => {
  it('a page token round-trips any valid name, multi-byte and astral included', () => {
    for (const name of ['a', 'post:100:likes', 'é'.repeat(100), 'x:😀', 'n'.repeat(200)]) {
      const token = encodePageToken(name);
      expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodePageToken(token, '')).toBe(name);
    }
    expect(decodePageToken(encodePageToken('post:1'), 'post:')).toBe('post:1');
  });

  it('a garbled, truncated, foreign or oversized page token is invalid_argument', () => {
    const token = encodePageToken('post:100:likes');
    const bad = [
      'not a token',
      '!!!!',
      token.slice(0, -1),
      `${token}=`,
      token.replace(/^./, (first) => (first === 'A' ? 'B' : 'A')),
      Buffer.from('post:100:likes').toString('base64url'),
      Buffer.of(1, 0xff, 0xfe).toString('base64url'),
      Buffer.concat([Buffer.of(1), Buffer.from('bad\nname')]).toString('base64url'),
      Buffer.of(1).toString('base64url'),
      'A'.repeat(301),
    ];
    for (const garbled of bad)
      expect(
        codeOf(() => decodePageToken(garbled, '')),
        garbled,
      ).toBe('invalid_argument');
    // A token of another prefix's listing would start that listing in the middle.
    expect(codeOf(() => decodePageToken(token, 'user:'))).toBe('invalid_argument');
  });

  it('the end of a prefix is the least string after every name it starts', () => {
    expect(prefixEnd('')).toBeUndefined();
    expect(prefixEnd('post:')).toBe('post;');
    expect(prefixEnd('a\u{10ffff}')).toBe('b');
    expect(prefixEnd('\u{10ffff}\u{10ffff}')).toBeUndefined();
    expect(prefixEnd('a\ud7ff')).toBe('a\ue000');
    expect(prefixEnd('a\uffff')).toBe('a\u{10000}');
    // Every name under the prefix sorts before the end, and the end itself is past them, in byte order.
    for (const prefix of ['p', 'é', 'a\uffff', 'x😀', 'a\ud7ff']) {
      const end = prefixEnd(prefix)!;
      for (const suffix of ['', 'z', '\u{10ffff}'.repeat(3), '\uffff']) expect(byteCompare(prefix + suffix, end)).toBeLessThan(0);
      expect(end.startsWith(prefix)).toBe(false);
      expect(byteCompare(prefix, end)).toBeLessThan(0);
    }
  });

  it('page size 0 is the default, 1..max is itself, anything else invalid_argument', () => {
    expect(validatePageSize(0)).toBe(listPageSizeDefault);
    expect(validatePageSize(1)).toBe(1);
    expect(validatePageSize(listPageSizeMax)).toBe(listPageSizeMax);
    for (const bad of [listPageSizeMax + 1, -1, 1.5, 2 ** 32 - 1]) expect(codeOf(() => validatePageSize(bad))).toBe('invalid_argument');
  });
});
