// The node's write-ahead log in SQLite: entries and their codecs, the
// checkpoint, snapshot install, and the checks a log passes at start. Its
// sub-folders (records/, checkpoint/, check/) are reached through here.
export { decodeEntryColumns, encodeEntryColumns } from './records/index.ts';
export { decodeRecord, visitRecord, type RawRecord } from './records/index.ts';
export { CommitWireWriter, decodeCommitWire, entriesOfWire, pieceOffsetOf, type CommitWire, type WirePiece } from './commit-wire.ts';
export { bytesChecksum, chunkChecksum } from './checksums.ts';
export { checkLogAtStart, isDamagedLog, logCorruptExitCode, markLogCorrupt } from './check/index.ts';
export {
  EntryKind,
  ShardLogError,
  decodeDroppedAt,
  decodeGeneration,
  droppedPart,
  encodeDroppedAt,
  encodeGeneration,
  entryProblem,
  entryShardIds,
  type LogEntry,
  type StoredEntry,
} from './records/index.ts';
export type { CheckpointFolder, CheckpointState, KeyRecord, SnapshotChunk } from './log-types.ts';
export { LogView } from './log-view.ts';
export { FoldRound } from './checkpoint/index.ts';
export { ShardLog } from './shard-log.ts';
export { logFileOf } from './log-file.ts';
