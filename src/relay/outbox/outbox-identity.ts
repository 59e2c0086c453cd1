// Whether the outbox's ids can still be keys (G12): the database and table
// the relay's keys were issued on, recorded per key namespace beside its
// attempts, against what it finds now. Pure rules; outbox.ts reads and writes.

/** What the relay records of the outbox when it first sends under a namespace, and what it finds at each batch. */
export interface OutboxIdentity {
  /** pg_control_system().system_identifier: made by initdb, kept by physical copies, new in any other cluster. */
  systemIdentifier: string;
  /** The outbox table's oid: new when it is dropped and created again. */
  outboxOid: string;
  /**
   * The id sequence's relfilenode, or null when the id has no sequence:
   * new whenever the sequence is restarted (TRUNCATE ... RESTART IDENTITY,
   * ALTER TABLE/SEQUENCE ... RESTART), kept by setval, VACUUM FULL and
   * physical copies.
   */
  sequenceFilenode: string | null;
}

export interface IdentityFinding {
  recorded: OutboxIdentity;
  current: OutboxIdentity;
  /** The highest row id sent under this namespace (0: none yet). */
  idHighWater: bigint;
  /**
   * The id sequence's last value now: null when it has issued none since it
   * was created or restarted, undefined when the id has no sequence or the
   * relay may not read it (the check is then left to Tally's answers).
   */
  sequenceLastValue: bigint | null | undefined;
}

/**
 * Why the outbox's ids may repeat ones already sent under this namespace,
 * in words for the halt's line; undefined when they cannot. A sequence only
 * moves back when restarted (TRUNCATE ... RESTART IDENTITY, ALTER SEQUENCE
 * ... RESTART, setval) or restored: every id it issued before is at most its
 * last value, so one below the highest id sent has gone back.
 */
export function identityChange(table: string, finding: IdentityFinding): string | undefined {
  const { recorded, current, idHighWater, sequenceLastValue } = finding;
  if (recorded.systemIdentifier !== current.systemIdentifier)
    return `the database's system identifier is ${current.systemIdentifier}, not ${recorded.systemIdentifier} as when the relay sent rows of ${table} under this key namespace (a restored or copied database)`;
  if (recorded.outboxOid !== current.outboxOid)
    return `${table} is not the table the relay sent rows of under this key namespace (oid ${current.outboxOid}, not ${recorded.outboxOid}: dropped and created again)`;
  if (recorded.sequenceFilenode !== current.sequenceFilenode)
    return `the id sequence of ${table} was restarted (TRUNCATE ... RESTART IDENTITY or ALTER ... RESTART: its relfilenode is ${current.sequenceFilenode ?? 'gone'}, not ${recorded.sequenceFilenode ?? 'none'})`;
  if (sequenceLastValue !== undefined && idHighWater > 0n && (sequenceLastValue === null || sequenceLastValue < idHighWater))
    return `the id sequence of ${table} is at ${sequenceLastValue ?? 'its start'}, below ${idHighWater}, the highest id already sent (set back)`;
  return undefined;
}

/** The halt's one line: why, which rows, what to do. */
export function idReuseMessage(table: string, why: string, ids: readonly bigint[], more: boolean): string {
  const named =
    ids.length === 0 ? 'no rows yet' : `${ids.length === 1 && !more ? 'row' : 'rows'} ${ids.join(', ')}${more ? ' and more' : ''}`;
  return (
    `ids of ${table} may repeat ones already counted: ${why}; ${named} of ${table} may be taken by Tally for rows it already counted and dropped as duplicates, ` +
    `so the relay sends nothing. Recount the counters fed by the outbox, then relay under a new --key-namespace (docs/outbox.md, "Reused ids")`
  );
}
