// The log's one error: what it holds cannot be trusted. Its own file so the
// codecs and the checksums both throw it without importing each other.

/** The log cannot be trusted: a row that could not have been written, a gap, a schema this node does not read. */
export class ShardLogError extends Error {
  override name = 'ShardLogError';
}
