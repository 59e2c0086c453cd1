// ListCounters: one page of the directory's counters under a prefix, in byte
// order, resumed strictly after the last name the previous page returned.
// Validates the whole request first; reads only the directory, never a node.
import { ErrorCode, TallyError, listPageSizeMax, validateCounterName, validateCounterPrefix } from '../../wire/index.ts';
import { listPageSizeDefault, type counterV1 } from '../../common/index.ts';
import type { NameRange, ListingDirectory } from '../directory/index.ts';
import { ttlInForce } from './expiry.ts';

/** Marks the token's layout; a later layout takes another first byte. */
const pageTokenVersion = 1;
/** base64url of the version byte and the longest name, with room to spare: longer is garbage, refused before decoding. */
const pageTokenCharsMax = 300;

/** The token that resumes a listing after `lastName`: opaque to callers, base64url of a version byte and the name. */
export function encodePageToken(lastName: string): string {
  return Buffer.concat([Buffer.of(pageTokenVersion), Buffer.from(lastName, 'utf8')]).toString('base64url');
}

/** The name a page token resumes after; INVALID_ARGUMENT for anything encodePageToken could not have made for this prefix. */
export function decodePageToken(token: string, prefix: string): string {
  const garbled = (): TallyError =>
    new TallyError(ErrorCode.invalidArgument, 'page_token is not a token ListCounters returned (garbled or truncated?)');
  if (token.length > pageTokenCharsMax || !/^[A-Za-z0-9_-]+$/.test(token)) throw garbled();
  const bytes = Buffer.from(token, 'base64url');
  // Node decodes leniently: only a token that re-encodes to itself is one we made.
  if (bytes.toString('base64url') !== token || bytes.length < 2 || bytes[0] !== pageTokenVersion) throw garbled();
  const nameBytes = bytes.subarray(1);
  const name = nameBytes.toString('utf8');
  if (!Buffer.from(name, 'utf8').equals(nameBytes)) throw garbled();
  try {
    validateCounterName(name);
  } catch {
    throw garbled();
  }
  if (!name.startsWith(prefix))
    throw new TallyError(ErrorCode.invalidArgument, 'page_token belongs to a listing of another prefix: start again without a token');
  return name;
}

/**
 * The least string greater than every string that starts with prefix, in
 * code point order (= UTF-8 byte order): the prefix with its last code point
 * raised by one, after dropping trailing U+10FFFF. Undefined when there is
 * none (an empty prefix, or one of U+10FFFF only).
 */
export function prefixEnd(prefix: string): string | undefined {
  const codePoints = Array.from(prefix, (character) => character.codePointAt(0)!);
  while (codePoints.length > 0) {
    const last = codePoints.pop()!;
    if (last === 0x10ffff) continue;
    // Surrogate code points are no characters: U+D7FF is followed by U+E000.
    const next = last + 1 === 0xd800 ? 0xe000 : last + 1;
    return String.fromCodePoint(...codePoints, next);
  }
  return undefined;
}

/** The page size a request asks for: 0 is the default; past the maximum is INVALID_ARGUMENT. */
export function validatePageSize(pageSize: number): number {
  if (pageSize === 0) return listPageSizeDefault;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > listPageSizeMax)
    throw new TallyError(ErrorCode.invalidArgument, `page_size must be 1..${listPageSizeMax} (0: ${listPageSizeDefault}), got ${pageSize}`);
  return pageSize;
}

/**
 * One page. Keyset pagination (name > the token's name) rather than an
 * offset: a scan never returns a name twice, and skips none that existed
 * from its first page to its last, whatever is created or deleted between
 * pages. One row more than the page is read, so the last page says so
 * (an empty next_page_token) instead of sending the caller for an empty one.
 */
export async function listCounters(
  directory: ListingDirectory,
  request: counterV1.ListCountersRequest__Output,
  /** The router default TTL, for counters without their own. */
  defaultTtlMs: number,
): Promise<counterV1.ListCountersResponse__Output> {
  const prefix = validateCounterPrefix(request.prefix);
  const pageSize = validatePageSize(request.pageSize);
  const after = request.pageToken === '' ? '' : decodePageToken(request.pageToken, prefix);
  const range: NameRange = { after, from: prefix, before: prefixEnd(prefix) };
  const rows = await directory.scan(range, pageSize + 1);
  const page = rows.length > pageSize ? rows.slice(0, pageSize) : rows;
  return {
    counters: page.map((row) => ({
      name: row.name,
      kind: row.kind,
      shards: row.shardCount,
      ttlMs: String(ttlInForce(row.ttlMs, defaultTtlMs).ttlMs),
    })),
    nextPageToken: rows.length > pageSize ? encodePageToken(page[page.length - 1]!.name) : '',
  };
}
