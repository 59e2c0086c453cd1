// The node's write-ahead log in SQLite: entries and their codecs, the
// checkpoint, snapshot install, and the checks a log passes at start.
export { decodeEntryColumns, encodeEntryColumns } from './entry-columns.ts';
export { checkLogAtStart, isDamagedLog, logCorruptExitCode, markLogCorrupt } from './log-check.ts';
export {
  EntryKind,
  ShardLog,
  decodeDroppedAt,
  decodeGeneration,
  droppedPart,
  encodeDroppedAt,
  encodeGeneration,
  entryProblem,
  logFileOf,
  type CheckpointFolder,
  type CheckpointState,
  type KeyRecord,
  type LogEntry,
  type LogView,
  type SnapshotChunk,
  type StoredEntry,
} from './shard-log.ts';
