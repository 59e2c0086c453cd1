// The outbox in PostgreSQL: its tables and lock (outbox-schema.ts), reading,
// claiming and settling rows (outbox.ts), the checks a row passes before it
// is sent (row-check.ts) and the identity that tells a reused id from a new
// row (outbox-identity.ts). It sends nothing to Tally: the relay does.
export { Outbox, connectPostgres, type DeadRow } from './outbox.ts';
export { createTables, outboxLockKey, outboxTableDdl, prepareTables, sqlName, type ResolvedOutbox } from './outbox-schema.ts';
export { capOf, isBeyondWindow, isRowRefusal, resendLimitMs, rowKey, rowProblem, splitSendable, type OutboxRow } from './row-check.ts';
export { idReuseMessage, identityChange, type IdentityFinding, type OutboxIdentity } from './outbox-identity.ts';
