// The node's write-ahead log in SQLite: entries and their codecs, the
// checkpoint, snapshot install, and the checks a log passes at start.
export { decodeEntryColumns, encodeEntryColumns } from './entry-columns.ts';
export { decodeRecord, visitRecord, type RawRecord } from './commit-records.ts';
export { CommitWireWriter, decodeCommitWire, entriesOfWire, pieceOffsetOf, type CommitWire, type WirePiece } from './commit-wire.ts';
export { bytesChecksum, chunkChecksum } from './checksums.ts';
export { checkLogAtStart, isDamagedLog, logCorruptExitCode, markLogCorrupt } from './log-check.ts';
export {
  EntryKind,
  ShardLogError,
  decodeDroppedAt,
  decodeGeneration,
  droppedPart,
  encodeDroppedAt,
  encodeGeneration,
  entryProblem,
  type LogEntry,
  type StoredEntry,
} from './log-entry.ts';
export type { CheckpointFolder, CheckpointState, KeyRecord, SnapshotChunk } from './log-types.ts';
export { LogView } from './log-view.ts';
export { FoldRound } from './fold-round.ts';
export { ShardLog, logFileOf } from './shard-log.ts';
