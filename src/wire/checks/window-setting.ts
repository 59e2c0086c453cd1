// A counter's window setting (bucket width, retention): the one type for it in
// the directory, node memory and log, src/window and the client; counter.v1's
// WindowSettings is its wire form. A shape only: src/window validates it.

/** Time buckets of bucketMs kept for retentionMs; {0, 0} means no window. */
export interface WindowSetting {
  readonly bucketMs: number;
  readonly retentionMs: number;
}
