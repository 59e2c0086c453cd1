// Reads a SQLite write-ahead file's frames as SQLite's own recovery does
// (header, salts, the running checksum) to tell a commit cut short by a crash
// (damage after the last valid commit frame, which was never acknowledged and
// which SQLite discards) from damage under a later commit (torn history).
// Pure over the bytes it is given: it opens no database and never writes.
import assert from 'node:assert/strict';

const walHeaderBytes = 32;
const frameHeaderBytes = 24;
const magicLittleEndian = 0x377f0682;
const magicBigEndian = 0x377f0683;

/** What a write-ahead file holds, frame by frame, as SQLite's recovery would see it. */
export interface WalLayout {
  pageSizeBytes: number;
  frameBytes: number;
  /** Frames whose salts match the header and whose running checksum holds (SQLite replays those up to the last commit). */
  validFrames: number;
  /** Byte offset of the end of each valid commit frame, in order. */
  commitEnds: number[];
  /**
   * Why the history is torn, or undefined when it is not: a frame of this
   * file's generation (its salts match) whose checksum fails while a commit
   * frame of the same generation follows it, so a commit that may have been
   * acknowledged lies past the damage. SQLite would stop at the damage and
   * silently drop that commit. A stale frame of an earlier generation is not torn.
   */
  torn: string | undefined;
  /**
   * What lies after the last valid commit and is not a commit's whole
   * frames, or undefined when nothing does: a frame whose checksum fails
   * with no commit of this generation after it, or bytes that end mid-frame.
   * That is a commit a crash (or a power cut before its fsync) cut short:
   * Tally acknowledges only after the commit's fsync, so it was never
   * acknowledged, and SQLite's recovery discards it. Not a reason to set the
   * log aside (G1).
   */
  discardedTail: string | undefined;
}

/** SQLite's walChecksumBytes: two running 32-bit sums over pairs of words. */
function checksum(data: Buffer, start: number, end: number, bigEndian: boolean, seed: [number, number]): [number, number] {
  assert.ok((end - start) % 8 === 0, 'checksummed spans are whole pairs of words');
  let [s1, s2] = seed;
  for (let offset = start; offset < end; offset += 8) {
    const a = bigEndian ? data.readUInt32BE(offset) : data.readUInt32LE(offset);
    const b = bigEndian ? data.readUInt32BE(offset + 4) : data.readUInt32LE(offset + 4);
    s1 = (s1 + a + s2) >>> 0;
    s2 = (s2 + b + s1) >>> 0;
  }
  return [s1, s2];
}

/**
 * The layout of a write-ahead file's bytes, or undefined when it holds no
 * header (empty, or shorter than one: SQLite ignores it and so do we).
 * A header whose own checksum fails is torn: SQLite would ignore every frame.
 */
export function readWalLayout(data: Buffer): WalLayout | undefined {
  if (data.length < walHeaderBytes) return data.length === 0 ? undefined : tornHeader(data.length, 'the header is cut short');
  const magic = data.readUInt32BE(0);
  if (magic !== magicLittleEndian && magic !== magicBigEndian) return tornHeader(data.length, `bad magic 0x${magic.toString(16)}`);
  const bigEndian = magic === magicBigEndian;
  const pageSizeField = data.readUInt32BE(8);
  const pageSizeBytes = pageSizeField === 1 ? 65_536 : pageSizeField;
  if (pageSizeBytes < 512 || pageSizeBytes > 65_536 || (pageSizeBytes & (pageSizeBytes - 1)) !== 0)
    return tornHeader(data.length, `bad page size ${pageSizeField}`);
  const salt1 = data.readUInt32BE(16);
  const salt2 = data.readUInt32BE(20);
  let sums = checksum(data, 0, 24, bigEndian, [0, 0]);
  if (sums[0] !== data.readUInt32BE(24) || sums[1] !== data.readUInt32BE(28)) return tornHeader(data.length, 'the header checksum fails');
  const frameBytes = frameHeaderBytes + pageSizeBytes;
  const layout: WalLayout = { pageSizeBytes, frameBytes, validFrames: 0, commitEnds: [], torn: undefined, discardedTail: undefined };
  // Bounded by the file: each step reads one whole frame or stops.
  const framesMax = Math.floor((data.length - walHeaderBytes) / frameBytes);
  for (let frame = 0; frame < framesMax; frame++) {
    const start = walHeaderBytes + frame * frameBytes;
    const sameGeneration = data.readUInt32BE(start + 8) === salt1 && data.readUInt32BE(start + 12) === salt2;
    // A frame left from an earlier generation of the file: the end of this one, not damage.
    if (!sameGeneration) break;
    const frameSums = checksum(
      data,
      start + frameHeaderBytes,
      start + frameBytes,
      bigEndian,
      checksum(data, start, start + 8, bigEndian, sums),
    );
    if (frameSums[0] !== data.readUInt32BE(start + 16) || frameSums[1] !== data.readUInt32BE(start + 20)) {
      const why = `frame ${frame} (at byte ${start}) belongs to this file but its checksum fails`;
      const laterCommit = laterCommitFrame(data, frame + 1, framesMax, frameBytes, salt1, salt2);
      if (laterCommit === undefined) layout.discardedTail = `${why}, and no commit follows it`;
      else layout.torn = `${why}, under the commit at frame ${laterCommit}`;
      return layout;
    }
    sums = frameSums;
    layout.validFrames++;
    if (data.readUInt32BE(start + 4) !== 0) layout.commitEnds.push(start + frameBytes);
  }
  // SQLite writes a frame as its header and then its page: bytes past the last
  // whole frame are a write cut short, after every commit the file holds.
  const tailBytes = (data.length - walHeaderBytes) % frameBytes;
  if (tailBytes !== 0) layout.discardedTail = `the file ends ${tailBytes} bytes into frame ${framesMax} (frames are ${frameBytes} bytes)`;
  return layout;
}

/**
 * The first frame from `from` on that is of this generation (its salts
 * match) and ends a commit (its database-size field is set), or undefined.
 * Its checksum cannot be verified past a damaged frame (the sums run on),
 * but its header alone says a commit was written after the damage.
 */
function laterCommitFrame(
  data: Buffer,
  from: number,
  framesMax: number,
  frameBytes: number,
  salt1: number,
  salt2: number,
): number | undefined {
  for (let frame = from; frame < framesMax; frame++) {
    const start = walHeaderBytes + frame * frameBytes;
    if (data.readUInt32BE(start + 8) !== salt1 || data.readUInt32BE(start + 12) !== salt2) return undefined;
    if (data.readUInt32BE(start + 4) !== 0) return frame;
  }
  return undefined;
}

function tornHeader(sizeBytes: number, why: string): WalLayout {
  return { pageSizeBytes: 0, frameBytes: 0, validFrames: 0, commitEnds: [], torn: `${why} (${sizeBytes} bytes)`, discardedTail: undefined };
}
