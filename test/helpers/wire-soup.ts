// Malformed protobuf input for codec property tests: wire tokens (tags of any
// field and wire type, varints of every length, some cut), length-framed soup
// and one-byte mutations of valid messages. Shared by the lean codecs' tests
// (test/unit/wire/codecs/counter-codec*.test.ts); it decides nothing itself.
import fc from 'fast-check';

export const varint = (value: number): number[] => (value > 127 ? [(value & 127) | 0x80, ...varint(value >>> 7)] : [value]);

const varintBytes = fc
  .array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 12 })
  .map((bytes) => bytes.map((byte, index) => (index < bytes.length - 1 ? byte | 0x80 : byte & 0x7f)));

/** A tag of field 0..maxField with any wire type 0..7. */
const tagOf = (maxField: number) =>
  fc.record({ field: fc.integer({ min: 0, max: maxField }), wireType: fc.integer({ min: 0, max: 7 }) }).map(({ field, wireType }) => {
    const value = (field << 3) | wireType;
    return value > 127 ? [(value & 127) | 0x80, value >> 7] : [value];
  });

/** Wire tokens: tags, varints of every length (some over-long or cut), lengths with bytes, and the first fields' tags. */
export function wireTokens(maxField = 5, fieldTags: number[] = [0x0a, 0x10]): fc.Arbitrary<Buffer> {
  const tag = tagOf(maxField);
  const token: fc.Arbitrary<number[]> = fc.oneof(
    tag,
    tag,
    varintBytes,
    fc.integer({ min: 0, max: 255 }).map((byte) => [byte]),
    fc.uint8Array({ maxLength: 12 }).map((bytes) => [bytes.length, ...bytes]),
    ...fieldTags.map((fieldTag) => fc.constant<number[]>([fieldTag])),
  );
  return fc.array(token, { maxLength: 16 }).map((parts) => Buffer.from(parts.flat()));
}

/** Repeated field 1 whose items are token soup, each framed with a length that may be right or off by a little. */
export function framedSoup(tokens: fc.Arbitrary<Buffer>): fc.Arbitrary<Buffer> {
  return fc.array(fc.tuple(tokens, fc.integer({ min: -2, max: 2 }), fc.boolean()), { maxLength: 5 }).map((items) =>
    Buffer.concat(
      items.map(([body, offBy, exact]) => {
        const sizeBytes = Math.max(0, body.length + (exact ? 0 : offBy));
        return Buffer.concat([Buffer.from([0x0a, ...varint(sizeBytes)]), body]);
      }),
    ),
  );
}

/** A valid message with one change: a byte replaced, cut short or a byte inserted. */
export function mutated(valid: fc.Arbitrary<Buffer>): fc.Arbitrary<Buffer> {
  return fc.tuple(valid, fc.nat(), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 2 })).map(([bytes, at, byte, how]) => {
    if (bytes.length === 0) return Buffer.from([byte]);
    const index = at % bytes.length;
    if (how === 0) return Buffer.concat([bytes.subarray(0, index), Buffer.from([byte]), bytes.subarray(index + 1)]);
    if (how === 1) return bytes.subarray(0, index);
    return Buffer.concat([bytes.subarray(0, index), Buffer.from([byte]), bytes.subarray(index)]);
  });
}

/** What a decode gave: its value, or its error's text. */
export function outcomeOf<T>(decode: () => T): { value: T } | { error: string } {
  try {
    return { value: decode() };
  } catch (error) {
    return { error: (error as Error).message };
  }
}
