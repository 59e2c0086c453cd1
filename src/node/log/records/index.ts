// The log's entry formats: what an entry may hold (checked before a write and
// after a read), its row, the commit record of packed plain increments, the
// entry columns of the replication wire, and the varints they share. Pure
// codecs: nothing here opens a database. Files of src/node/log reach inside;
// everything else imports src/node/log/index.ts.
export { decodeEntryColumns, encodeEntryColumns, columnsBytes } from './entry-columns.ts';
export { MergedReader, decodeRecord, encodeRecord, isPlainEntry, recordEntriesMin, visitRecord, type RawRecord } from './commit-records.ts';
export {
  EntryKind,
  ShardLogError,
  checkEntry,
  decodeDroppedAt,
  decodeGeneration,
  droppedPart,
  encodeDroppedAt,
  encodeGeneration,
  entryProblem,
  entryShardIds,
  extraColumns,
  type LogEntry,
  type StoredEntry,
} from './log-entry.ts';
