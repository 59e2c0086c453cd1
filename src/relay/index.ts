// The outbox relay's public surface (G12): the two CLI commands, and the
// pieces tests and benches reach for. The relay is a Tally client only.
export { relayCommand, recountCommand, type UsageErrorOf } from './command.ts';
export {
  parseRelayConfig,
  parsePostgresSettings,
  relaySettingsHelp,
  postgresSettingsHelp,
  parseTableName,
  relayDefaults,
  type RelayConfig,
  type PostgresSettings,
} from './config.ts';
export { outboxTableDdl } from './outbox/index.ts';
export { rowKey, rowProblem, splitSendable, resendLimitMs, isBeyondWindow, capOf, type OutboxRow } from './outbox/index.ts';
export { sendRows, type IncrementSender, type SendOutcome } from './send-rows.ts';
export { repairKey, type RecountReport } from './recount.ts';
export { RelayError, RelayErrorCode } from './relay-error.ts';
export { windowRefusal, type RelayClient } from './relay.ts';
export { identityChange, idReuseMessage, type OutboxIdentity, type IdentityFinding } from './outbox/index.ts';
