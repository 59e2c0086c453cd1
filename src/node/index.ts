// The node's surface for offline tools (tally backup verify, tally restore):
// the log opened on a data directory no node is running on, and the
// snapshot chunk codec and checks the install path uses. A running node
// imports none of this through here.
export {
  ShardLog,
  logFileOf,
  bytesChecksum,
  chunkChecksum,
  decodeEntryColumns,
  type SnapshotChunk,
  type StoredEntry,
} from './log/index.ts';
export { decodeReplicated } from './replication/index.ts';
