// Varints for the log's packed columns (checkpoint blocks, commit records):
// LEB128, and zigzag for signed values. Writers only: each format reads its
// own, so that a bad byte is reported in that format's words.

// Below 2^48 a zigzagged value fits in a double exactly: most values take the number path.
const numberPathLimit = 2 ** 48;

/** Writes value (a non-negative safe integer) at out[at]; returns the end. */
export function writeUnsigned(out: Buffer, at: number, value: number): number {
  let rest = value;
  while (rest >= 0x80) {
    out[at++] = (rest % 0x80) | 0x80;
    rest = Math.floor(rest / 0x80);
  }
  out[at++] = rest;
  return at;
}

function writeUnsignedBig(out: Buffer, at: number, value: bigint): number {
  let rest = value;
  while (rest >= 0x80n) {
    out[at++] = Number(rest & 0x7fn) | 0x80;
    rest >>= 7n;
  }
  out[at++] = Number(rest);
  return at;
}

/** Writes value (within int64, checked by the caller) zigzagged at out[at]; returns the end. */
export function writeZigzag(out: Buffer, at: number, value: number | bigint): number {
  if (value < numberPathLimit && value > -numberPathLimit) {
    const small = Number(value);
    return writeUnsigned(out, at, small >= 0 ? small * 2 : -small * 2 - 1);
  }
  const big = BigInt(value);
  return writeUnsignedBig(out, at, big >= 0n ? big << 1n : (-big << 1n) - 1n);
}
