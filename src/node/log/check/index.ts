// The checks a log file passes before a node trusts it (a torn write-ahead
// file, SQLite's quick_check, the checksums), and setting a damaged file
// aside. Reads files; never repairs one in place. Files of src/node/log
// reach inside; everything else imports src/node/log/index.ts.
export { checkLogAtStart, isDamagedLog, logCorruptExitCode, markLogCorrupt } from './log-check.ts';
export { readWalLayout, type WalLayout } from './wal-frames.ts';
