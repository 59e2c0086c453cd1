// Unit tests for input validation (G7): names, idempotency keys and int64
// amounts. Callers match on TallyError.code, so the tests do too.
import { describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import {
  isInt64,
  parseInt64,
  validateAmount,
  validateCounterName,
  validateIdempotencyKey,
  validateNodeAddress,
  TallyError,
  INT64_MAX,
  INT64_MIN,
  counterNameBytesMax,
  idempotencyKeyBytesMax,
  nodeAddressBytesMax,
} from '../../../../src/wire/index.ts';
import { codeOf } from '../../../helpers/rejection.ts';

describe('validate: counter names', () => {
  it('an empty or non-string counter name is invalid_argument', () => {
    expect(codeOf(() => validateCounterName(''))).toBe('invalid_argument');
    expect(codeOf(() => validateCounterName(undefined))).toBe('invalid_argument');
    expect(codeOf(() => validateCounterName(42))).toBe('invalid_argument');
  });

  it('a rejected name maps to gRPC INVALID_ARGUMENT', () => {
    try {
      validateCounterName('');
      expect.unreachable('empty name accepted');
    } catch (error) {
      expect(error).toBeInstanceOf(TallyError);
      expect((error as TallyError).grpcCode).toBe(status.INVALID_ARGUMENT);
    }
  });

  it('a counter name of 200 ASCII bytes is accepted and returned unchanged', () => {
    const name = 'n'.repeat(counterNameBytesMax);
    expect(counterNameBytesMax).toBe(200);
    expect(validateCounterName(name)).toBe(name);
    expect(validateCounterName('a')).toBe('a');
  });

  it('a counter name of 201 ASCII bytes is invalid_argument', () => {
    expect(codeOf(() => validateCounterName('n'.repeat(201)))).toBe('invalid_argument');
  });

  it('the name limit counts UTF-8 bytes, not characters', () => {
    // é is 2 bytes, € is 3, 😀 is 4 (and 2 UTF-16 code units).
    expect(codeOf(() => validateCounterName('é'.repeat(100)))).toBe('no error');
    expect(codeOf(() => validateCounterName('a' + 'é'.repeat(100)))).toBe('invalid_argument');
    expect(codeOf(() => validateCounterName('€'.repeat(66) + 'ab'))).toBe('no error');
    expect(codeOf(() => validateCounterName('€'.repeat(66) + 'abc'))).toBe('invalid_argument');
    expect(codeOf(() => validateCounterName('😀'.repeat(50)))).toBe('no error');
    expect(codeOf(() => validateCounterName('😀'.repeat(50) + 'a'))).toBe('invalid_argument');
  });

  it.each([
    ['NUL \\u0000', 'a\u0000b'],
    ['tab', 'a\tb'],
    ['newline', 'a\nb'],
    ['unit separator \\u001f', 'a\u001fb'],
    ['DEL \\u007f', 'a\u007fb'],
    ['NEL \\u0085', 'a\u0085b'],
    ['last C1 \\u009f', 'a\u009fb'],
  ])('validate: a counter name containing the control character %s is invalid_argument', (_label, name) => {
    expect(codeOf(() => validateCounterName(name))).toBe('invalid_argument');
  });

  it('printable characters just outside the control ranges are accepted', () => {
    expect(validateCounterName('a b~')).toBe('a b~');
    expect(validateCounterName('a\u00a0b')).toBe('a\u00a0b');
    expect(validateCounterName('页面:views/😀')).toBe('页面:views/😀');
  });

  it.each([
    ['a lone high surrogate', '\ud800'],
    ['a high surrogate at the end', 'abc\ud83d'],
    ['a lone low surrogate', 'a\udc00b'],
    ['a reversed pair', '\ude00\ud83d'],
  ])('validate: a counter name with %s is invalid_argument', (_label, name) => {
    expect(codeOf(() => validateCounterName(name))).toBe('invalid_argument');
  });
});

describe('validate: idempotency keys', () => {
  it('a missing idempotency key is an empty buffer', () => {
    expect(validateIdempotencyKey(undefined)).toEqual(Buffer.alloc(0));
    expect(validateIdempotencyKey(null)).toEqual(Buffer.alloc(0));
    expect(validateIdempotencyKey(Buffer.alloc(0))).toEqual(Buffer.alloc(0));
  });

  it('an idempotency key of 128 bytes is accepted, as a Buffer with the same bytes', () => {
    expect(idempotencyKeyBytesMax).toBe(128);
    const bytes = new Uint8Array(128).map((_, index) => index);
    const key = validateIdempotencyKey(bytes);
    expect(Buffer.isBuffer(key)).toBe(true);
    expect([...key]).toEqual([...bytes]);
  });

  it('an idempotency key of 129 bytes is invalid_argument', () => {
    expect(codeOf(() => validateIdempotencyKey(Buffer.alloc(129, 1)))).toBe('invalid_argument');
    expect(codeOf(() => validateIdempotencyKey(new Uint8Array(129)))).toBe('invalid_argument');
  });
});

describe('validate: int64 amounts', () => {
  it('parseInt64 reads bigints, safe integer numbers and decimal strings', () => {
    expect(parseInt64(5n, 'x')).toBe(5n);
    expect(parseInt64(-17, 'x')).toBe(-17n);
    expect(parseInt64(Number.MAX_SAFE_INTEGER, 'x')).toBe(9007199254740991n);
    expect(parseInt64('123', 'x')).toBe(123n);
    expect(parseInt64('+9', 'x')).toBe(9n);
    expect(parseInt64('-0042', 'x')).toBe(-42n);
  });

  it('parseInt64 accepts exactly the int64 extremes', () => {
    expect(parseInt64('9223372036854775807', 'x')).toBe(INT64_MAX);
    expect(parseInt64('-9223372036854775808', 'x')).toBe(INT64_MIN);
    expect(parseInt64(INT64_MAX, 'x')).toBe(INT64_MAX);
    expect(parseInt64(INT64_MIN, 'x')).toBe(INT64_MIN);
  });

  it('an integer one beyond int64 is out_of_range', () => {
    expect(codeOf(() => parseInt64('9223372036854775808', 'x'))).toBe('out_of_range');
    expect(codeOf(() => parseInt64('-9223372036854775809', 'x'))).toBe('out_of_range');
    expect(codeOf(() => parseInt64(INT64_MAX + 1n, 'x'))).toBe('out_of_range');
    expect(codeOf(() => parseInt64(INT64_MIN - 1n, 'x'))).toBe('out_of_range');
    expect(codeOf(() => parseInt64('99999999999999999999', 'x'))).toBe('out_of_range');
  });

  it('an out-of-range amount maps to gRPC OUT_OF_RANGE', () => {
    try {
      validateAmount('9223372036854775808');
      expect.unreachable('amount beyond int64 accepted');
    } catch (error) {
      expect((error as TallyError).grpcCode).toBe(status.OUT_OF_RANGE);
    }
  });

  // Regression test (src/wire/checks/validate.ts:50, fixed): the string pattern allows at most 20
  // digits, so a decimal integer of 21 or more digits is reported as "not an
  // integer" (invalid_argument) instead of beyond int64 (out_of_range, G7).
  it('a decimal string of 21+ digits is out_of_range, not invalid_argument', () => {
    expect(codeOf(() => parseInt64('123456789012345678901', 'amount'))).toBe('out_of_range');
    expect(codeOf(() => validateAmount('-100000000000000000000000'))).toBe('out_of_range');
  });

  // Regression test (src/wire/checks/validate.ts:48, fixed): a JS number that is an integer beyond
  // int64 (here 2^63 and 1e19) fails the safe-integer check and is reported as
  // "not an integer" (invalid_argument) rather than out_of_range.
  it('a number that is an integer beyond int64 is out_of_range', () => {
    expect(codeOf(() => parseInt64(2 ** 63, 'amount'))).toBe('out_of_range');
    expect(codeOf(() => parseInt64(1e19, 'amount'))).toBe('out_of_range');
  });

  it.each([
    ['a fraction string', '1.5'],
    ['a fraction', 1.5],
    ['exponent notation', '1e3'],
    ['hex', '0x10'],
    ['an empty string', ''],
    ['a leading space', ' 1'],
    ['a sign alone', '-'],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['an unsafe integer number', 2 ** 60],
    ['null', null],
    ['undefined', undefined],
    ['an object', { value: 1 }],
  ])('validate: parseInt64 rejects %s with invalid_argument', (_label, value) => {
    expect(codeOf(() => parseInt64(value, 'x'))).toBe('invalid_argument');
  });

  it.each([0, 0n, '0', '-0', '+0', '000'])('validate: amount %s is rejected with invalid_argument', (amount) => {
    expect(codeOf(() => validateAmount(amount))).toBe('invalid_argument');
  });

  it('negative amounts are fine, down to INT64_MIN', () => {
    expect(validateAmount(-1)).toBe(-1n);
    expect(validateAmount('-5')).toBe(-5n);
    expect(validateAmount(INT64_MIN)).toBe(INT64_MIN);
    expect(validateAmount(INT64_MAX)).toBe(INT64_MAX);
  });

  it('validateAmount rejects beyond-int64 amounts with out_of_range', () => {
    expect(codeOf(() => validateAmount(INT64_MAX + 1n))).toBe('out_of_range');
    expect(codeOf(() => validateAmount('-9223372036854775809'))).toBe('out_of_range');
  });

  it('isInt64 is true exactly on [INT64_MIN, INT64_MAX]', () => {
    expect(isInt64(INT64_MAX)).toBe(true);
    expect(isInt64(INT64_MIN)).toBe(true);
    expect(isInt64(0n)).toBe(true);
    expect(isInt64(INT64_MAX + 1n)).toBe(false);
    expect(isInt64(INT64_MIN - 1n)).toBe(false);
  });
});

describe('validate: node addresses', () => {
  it.each(['127.0.0.1:7001', 'node-3.example.com:50051', '[::1]:7000'])('validate: node address %s is accepted as given', (address) => {
    expect(validateNodeAddress(address, 'address')).toBe(address);
  });

  it('a node address up to nodeAddressBytesMax is accepted, one byte more is not', () => {
    const fitting = `${'h'.repeat(nodeAddressBytesMax - 6)}:50051`;
    expect(validateNodeAddress(fitting, 'address')).toBe(fitting);
    expect(codeOf(() => validateNodeAddress(`h${fitting}`, 'address'))).toBe('invalid_argument');
  });

  it.each(['', 'no-port', ':7001', 'a b:7001', 'a/b:7001', 'h:65536'])(
    'validate: node address "%s" is rejected with invalid_argument',
    (address) => {
      expect(codeOf(() => validateNodeAddress(address, 'new_address'))).toBe('invalid_argument');
    },
  );
});
