// HyperLogLog distinct counts: hashing members to registers, a sketch that is
// sparse while small and dense past 8 KiB, Ertl's estimator, and the byte
// formats for checkpoints and the write-ahead log. Pure: no I/O, no clock.
// Formats and the hash seed are persisted: never change them in place.
import assert from 'node:assert';
import xxhash from 'xxhash-wasm';
import { ErrorCode, TallyError } from '../wire/index.ts';

/** Index bits of the hash (p); Redis uses the same. */
export const hllPrecisionBits = 14;
/** Registers per sketch (m = 2^p). */
export const hllRegisterCount = 1 << hllPrecisionBits;
/** Largest register value: 64 - p hash bits left for the rank, plus one (q + 1). */
export const hllRankMax = 64 - hllPrecisionBits + 1;
/** Relative standard error of an estimate, 1.04 / sqrt(m): about 0.81 %. */
export const hllStandardError = 1.04 / Math.sqrt(hllRegisterCount);

/** Seed of the member hash. Sketches are stored, so it is fixed for ever. */
const memberHashSeed = 0n;
/** Ranks come from the hash bits above the index: 50 of them, split over two 32-bit words. */
const rankBitsInLowWord = 32 - hllPrecisionBits;
const rankBitsTotal = hllRankMax - 1;
const indexMask = hllRegisterCount - 1;

/** A sparse entry is index << 6 | rank: sorting entries sorts indexes. */
const entryRankBits = 6;
const entryRankMask = (1 << entryRankBits) - 1;
/** Sparse entries are 4 bytes; past 2048 of them (8 KiB) the dense 16 KiB array is the better deal. */
const sparseEntriesMax = 2_048;
const sparseEntriesInitial = 16;

/** Serialized form: 1 tag byte, then the body the tag names. */
const formatSparse = 0x01;
const formatDense = 0x02;
/** Sparse body and register changes: u16 LE index, u8 rank per register. */
const changeBytes = 3;
/** Dense body: four 6-bit registers in every 3 bytes, little-endian (as Redis packs them). */
const denseBodyBytes = (hllRegisterCount * 6) / 8;

/** Ertl's estimator: alpha for m -> infinity, 1 / (2 ln 2). */
const alphaInf = 0.5 / Math.LN2;

/** One register's new value, as written to the log. */
export type RegisterChange = readonly [index: number, rank: number];

export interface MemberHasher {
  /** The register a member lands in (low 14 hash bits) and its rank there (1..51). */
  registerOf(member: Uint8Array): { index: number; rank: number };
}

/** XXH64 runs in WebAssembly, so the hasher is ready only once the module has compiled. */
export async function loadMemberHasher(): Promise<MemberHasher> {
  const { h64Raw } = await xxhash();
  return {
    registerOf(member: Uint8Array): { index: number; rank: number } {
      const hash = h64Raw(member, memberHashSeed);
      // Only the low word is needed unless its 18 rank bits are all zero (1 in
      // 2^18): converting one 32-bit half instead of two nearly halves the
      // BigInt cost. asIntN is the fastest conversion; >>> makes it unsigned.
      const lowWord = Number(BigInt.asIntN(32, hash));
      const index = lowWord & indexMask;
      const lowRankBits = lowWord >>> hllPrecisionBits;
      if (lowRankBits !== 0) return { index, rank: trailingZeros(lowRankBits) + 1 };
      const highWord = Number(BigInt.asIntN(32, hash >> 32n));
      if (highWord !== 0) return { index, rank: rankBitsInLowWord + trailingZeros(highWord) + 1 };
      // All 50 rank bits zero: Redis's sentinel bit caps the rank at q + 1.
      return { index, rank: rankBitsTotal + 1 };
    },
  };
}

/** Trailing zero bits of a non-zero 32-bit value. */
function trailingZeros(word: number): number {
  return 31 - Math.clz32(word & -word);
}

function assertRegister(index: number, rank: number): void {
  if (!(Number.isInteger(index) && index >= 0 && index < hllRegisterCount)) {
    assert.fail(`hll: register index ${index} outside 0..${hllRegisterCount - 1}`);
  }
  if (!(Number.isInteger(rank) && rank >= 0 && rank <= hllRankMax)) {
    assert.fail(`hll: rank ${rank} outside 0..${hllRankMax}`);
  }
}

function corrupt(what: string): TallyError {
  return new TallyError(ErrorCode.internal, `hll: corrupt ${what}`);
}

/**
 * The 16384 registers of one HyperLogLog. Starts sparse (a sorted Uint32Array
 * of index << 6 | rank, grown geometrically) and turns dense (one byte per
 * register) for good once sparse would need more than 8 KiB.
 */
export class HllSketch {
  /** Sparse entries, sorted; only the first sparseCount are in use. Null once dense. */
  private sparse: Uint32Array | null = new Uint32Array(sparseEntriesInitial);
  private sparseCount = 0;
  private dense: Uint8Array | null = null;

  get isDense(): boolean {
    return this.dense !== null;
  }

  /** Sets register `index` to max(current, rank); true iff it changed. */
  observe(index: number, rank: number): boolean {
    assertRegister(index, rank);
    const dense = this.dense;
    if (dense !== null) {
      if (rank <= dense[index]!) return false;
      dense[index] = rank;
      return true;
    }
    if (rank === 0) return false;
    return this.observeSparse(index, rank);
  }

  get(index: number): number {
    assertRegister(index, 0);
    if (this.dense !== null) return this.dense[index]!;
    const position = this.sparseLowerBound(index);
    const entry = position < this.sparseCount ? this.sparse![position]! : -1;
    return entry >>> entryRankBits === index ? entry & entryRankMask : 0;
  }

  /** Register-wise max with another sketch: afterwards this counts the union. */
  mergeFrom(other: HllSketch): void {
    if (other.dense === null) {
      const entries = other.sparse!;
      for (let position = 0; position < other.sparseCount; position++) {
        const entry = entries[position]!;
        this.observe(entry >>> entryRankBits, entry & entryRankMask);
      }
      return;
    }
    const dense = this.dense ?? this.toDense();
    const source = other.dense;
    for (let index = 0; index < hllRegisterCount; index++) {
      if (source[index]! > dense[index]!) dense[index] = source[index]!;
    }
  }

  /** Applies logged register changes (each a max); returns how many registers rose. */
  mergeRegisters(changes: Iterable<RegisterChange>): number {
    let changedCount = 0;
    for (const [index, rank] of changes) {
      if (this.observe(index, rank)) changedCount++;
    }
    return changedCount;
  }

  /** Non-zero registers as [index, rank], in index order. */
  *nonZeroRegisters(): IterableIterator<[index: number, rank: number]> {
    if (this.dense !== null) {
      const dense = this.dense;
      for (let index = 0; index < hllRegisterCount; index++) {
        if (dense[index]! !== 0) yield [index, dense[index]!];
      }
      return;
    }
    const entries = this.sparse!;
    for (let position = 0; position < this.sparseCount; position++) {
      const entry = entries[position]!;
      yield [entry >>> entryRankBits, entry & entryRankMask];
    }
  }

  nonZeroRegisterCount(): number {
    if (this.dense === null) return this.sparseCount;
    let count = 0;
    for (let index = 0; index < hllRegisterCount; index++) {
      if (this.dense[index]! !== 0) count++;
    }
    return count;
  }

  /** Bytes held by the register arrays (sparse capacity included), for metrics. */
  memoryBytes(): number {
    return this.dense !== null ? this.dense.byteLength : this.sparse!.byteLength;
  }

  /**
   * Distinct members observed, rounded: Ertl's improved raw estimator
   * ("New cardinality estimation algorithms for HyperLogLog sketches", 2017)
   * as Redis >= 5 computes it. Unbiased from 0 to far beyond 2^32 without
   * bias tables or a switch to linear counting.
   */
  estimate(): number {
    const histogram = new Array<number>(hllRankMax + 1).fill(0);
    if (this.dense !== null) {
      for (let index = 0; index < hllRegisterCount; index++) histogram[this.dense[index]!]!++;
    } else {
      histogram[0] = hllRegisterCount - this.sparseCount;
      for (let position = 0; position < this.sparseCount; position++) {
        histogram[this.sparse![position]! & entryRankMask]!++;
      }
    }
    const m = hllRegisterCount;
    let z = m * hllTau((m - histogram[hllRankMax]!) / m);
    for (let rank = hllRankMax - 1; rank >= 1; rank--) {
      z += histogram[rank]!;
      z *= 0.5;
    }
    z += m * hllSigma(histogram[0]! / m);
    // An empty sketch has z = Infinity, so the estimate is exactly 0.
    return Math.round((alphaInf * m * m) / z);
  }

  /** Sparse: tag + 3 bytes per non-zero register (at most 6 KiB). Dense: tag + 12 KiB of 6-bit registers. */
  serialize(): Buffer {
    if (this.dense === null) {
      const out = Buffer.allocUnsafe(1 + this.sparseCount * changeBytes);
      out[0] = formatSparse;
      const entries = this.sparse!;
      for (let position = 0; position < this.sparseCount; position++) {
        const entry = entries[position]!;
        const offset = 1 + position * changeBytes;
        out.writeUInt16LE(entry >>> entryRankBits, offset);
        out[offset + 2] = entry & entryRankMask;
      }
      return out;
    }
    const out = Buffer.allocUnsafe(1 + denseBodyBytes);
    out[0] = formatDense;
    const dense = this.dense;
    for (let index = 0, offset = 1; index < hllRegisterCount; index += 4, offset += 3) {
      const packed = dense[index]! | (dense[index + 1]! << 6) | (dense[index + 2]! << 12) | (dense[index + 3]! << 18);
      out[offset] = packed & 0xff;
      out[offset + 1] = (packed >>> 8) & 0xff;
      out[offset + 2] = packed >>> 16;
    }
    return out;
  }

  /** The inverse of serialize. Throws TallyError (code internal) on anything serialize could not have written. */
  static deserialize(buf: Buffer): HllSketch {
    if (buf.length === 0) throw corrupt('sketch: empty buffer');
    const sketch = new HllSketch();
    const tag = buf[0]!;
    if (tag === formatSparse) {
      const entryCount = (buf.length - 1) / changeBytes;
      if (!Number.isInteger(entryCount)) {
        throw corrupt(`sparse sketch: body of ${buf.length - 1} bytes is not a multiple of ${changeBytes}`);
      }
      let previousIndex = -1;
      for (let offset = 1; offset < buf.length; offset += changeBytes) {
        const index = buf.readUInt16LE(offset);
        const rank = buf[offset + 2]!;
        checkStoredRegister('sparse sketch', index, rank);
        if (index <= previousIndex) {
          throw corrupt(`sparse sketch: index ${index} after ${previousIndex}, not strictly increasing`);
        }
        previousIndex = index;
      }
      // Strictly increasing indexes bound entryCount by the register count.
      if (entryCount > sparseEntriesMax) sketch.toDense();
      for (let offset = 1; offset < buf.length; offset += changeBytes) {
        sketch.observe(buf.readUInt16LE(offset), buf[offset + 2]!);
      }
      return sketch;
    }
    if (tag === formatDense) {
      if (buf.length !== 1 + denseBodyBytes) {
        throw corrupt(`dense sketch: ${buf.length} bytes, expected ${1 + denseBodyBytes}`);
      }
      const dense = sketch.toDense();
      for (let index = 0, offset = 1; index < hllRegisterCount; index += 4, offset += 3) {
        const packed = buf[offset]! | (buf[offset + 1]! << 8) | (buf[offset + 2]! << 16);
        for (let lane = 0; lane < 4; lane++) {
          const rank = (packed >>> (lane * 6)) & 0x3f;
          if (rank > hllRankMax) throw corrupt(`dense sketch: register ${index + lane} holds ${rank} > ${hllRankMax}`);
          dense[index + lane] = rank;
        }
      }
      return sketch;
    }
    throw corrupt(`sketch: unknown format tag 0x${tag.toString(16).padStart(2, '0')}`);
  }

  private observeSparse(index: number, rank: number): boolean {
    const position = this.sparseLowerBound(index);
    let entries = this.sparse!;
    if (position < this.sparseCount) {
      const entry = entries[position]!;
      if (entry >>> entryRankBits === index) {
        if (rank <= (entry & entryRankMask)) return false;
        entries[position] = (index << entryRankBits) | rank;
        return true;
      }
    }
    if (this.sparseCount === sparseEntriesMax) {
      this.toDense()[index] = rank;
      return true;
    }
    if (this.sparseCount === entries.length) {
      const grown = new Uint32Array(Math.min(entries.length * 2, sparseEntriesMax));
      grown.set(entries);
      this.sparse = entries = grown;
    }
    entries.copyWithin(position + 1, position, this.sparseCount);
    entries[position] = (index << entryRankBits) | rank;
    this.sparseCount++;
    return true;
  }

  /** First position whose entry's index is >= `index` (sparseCount if none). */
  private sparseLowerBound(index: number): number {
    const entries = this.sparse!;
    const target = index << entryRankBits;
    let low = 0;
    let high = this.sparseCount;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (entries[middle]! < target) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private toDense(): Uint8Array {
    if (this.dense !== null) return this.dense;
    const dense = new Uint8Array(hllRegisterCount);
    const entries = this.sparse!;
    for (let position = 0; position < this.sparseCount; position++) {
      const entry = entries[position]!;
      dense[entry >>> entryRankBits] = entry & entryRankMask;
    }
    this.dense = dense;
    this.sparse = null;
    this.sparseCount = 0;
    return dense;
  }
}

function checkStoredRegister(what: string, index: number, rank: number): void {
  if (index >= hllRegisterCount) throw corrupt(`${what}: index ${index} >= ${hllRegisterCount}`);
  if (rank === 0 || rank > hllRankMax) throw corrupt(`${what}: rank ${rank} outside 1..${hllRankMax}`);
}

/** sigma(x) of Ertl's estimator: the contribution of zero registers (x = their share). */
function hllSigma(x: number): number {
  if (x === 1) return Infinity;
  let y = 1;
  let z = x;
  let previous: number;
  // Converges in well under 64 rounds for x < 1; the bound keeps the loop finite regardless.
  for (let round = 0; round < 1_000; round++) {
    x *= x;
    previous = z;
    z += x * y;
    y += y;
    if (previous === z) break;
  }
  return z;
}

/** tau(x) of Ertl's estimator: the correction for registers at the rank cap (x = share below it). */
function hllTau(x: number): number {
  if (x === 0 || x === 1) return 0;
  let y = 1;
  let z = 1 - x;
  let previous: number;
  for (let round = 0; round < 1_000; round++) {
    x = Math.sqrt(x);
    previous = z;
    y *= 0.5;
    z -= (1 - x) ** 2 * y;
    if (previous === z) break;
  }
  return z / 3;
}

/** Register changes for the write-ahead log: 3 bytes each, u16 LE index then u8 rank (1..51). */
export function packRegisterChanges(changes: readonly RegisterChange[]): Buffer {
  const out = Buffer.allocUnsafe(changes.length * changeBytes);
  for (let position = 0; position < changes.length; position++) {
    const [index, rank] = changes[position]!;
    assertRegister(index, rank);
    assert(rank !== 0, 'hll: a register change has rank 1 or more');
    const offset = position * changeBytes;
    out.writeUInt16LE(index, offset);
    out[offset + 2] = rank;
  }
  return out;
}

/** The inverse of packRegisterChanges. Throws TallyError (code internal) on a bad length, index or rank. */
export function unpackRegisterChanges(buf: Buffer): [index: number, rank: number][] {
  if (buf.length % changeBytes !== 0) {
    throw corrupt(`register changes: ${buf.length} bytes is not a multiple of ${changeBytes}`);
  }
  const changes: [index: number, rank: number][] = [];
  for (let offset = 0; offset < buf.length; offset += changeBytes) {
    const index = buf.readUInt16LE(offset);
    const rank = buf[offset + 2]!;
    checkStoredRegister('register changes', index, rank);
    changes.push([index, rank]);
  }
  return changes;
}
