// What one region's client knows of its own increments, from its history: per
// counter, the amount acknowledged (a key once, whichever attempt was ok) and
// the amount of unknown outcome (never acknowledged, not known to have failed).
// A region's exact total must lie in [acknowledged, acknowledged + unknown].
import type { History, IncrementOperation } from '../nemesis/index.ts';

export interface Counted {
  acknowledged: bigint;
  unknown: bigint;
}

export function countIncrements(history: History, counter: string): Counted {
  const increments = history.operations.filter(
    (operation): operation is IncrementOperation => operation.kind === 'increment' && operation.counter === counter,
  );
  let acknowledged = 0n;
  let unknown = 0n;
  const attemptsByKey = new Map<string, IncrementOperation[]>();
  for (const operation of increments) {
    if (operation.key !== undefined) {
      const attempts = attemptsByKey.get(operation.key) ?? [];
      attempts.push(operation);
      attemptsByKey.set(operation.key, attempts);
    } else if (operation.outcome === 'ok') acknowledged += operation.amount;
    else if (operation.outcome === 'unknown') unknown += operation.amount;
  }
  for (const attempts of attemptsByKey.values()) {
    const amount = attempts[0]!.amount;
    if (attempts.some((attempt) => attempt.outcome === 'ok')) acknowledged += amount;
    else if (attempts.some((attempt) => attempt.outcome === 'unknown')) unknown += amount;
  }
  return { acknowledged, unknown };
}

/** Acknowledged increments of one counter whose acknowledgement ended before `beforeMs` (machine monotonic ms); a key once. */
export function acknowledgedBefore(history: History, counter: string, beforeMs: number): bigint {
  const seenKeys = new Set<string>();
  let sum = 0n;
  for (const operation of history.operations) {
    if (operation.kind !== 'increment' || operation.counter !== counter || operation.outcome !== 'ok' || operation.endMs >= beforeMs)
      continue;
    if (operation.key !== undefined) {
      if (seenKeys.has(operation.key)) continue;
      seenKeys.add(operation.key);
    }
    sum += operation.amount;
  }
  return sum;
}

/** The share of increments started in [fromMs, toMs) that were acknowledged (1 when none started). */
export function acknowledgedShare(
  history: History,
  fromMs: number,
  toMs: number,
): { share: number; started: number; acknowledged: number } {
  const started = history.startedWithin(fromMs, toMs).filter((operation) => operation.kind === 'increment');
  const acknowledged = started.filter((operation) => operation.outcome === 'ok').length;
  return { share: started.length === 0 ? 1 : acknowledged / started.length, started: started.length, acknowledged };
}
