// The parsers that turn the CLI's argument and flag text into values or a
// one-line usage error (command-spec.ts splits the command line).
import { parseMemberId } from '../wire/index.ts';

export class UsageError extends Error {}

export function parseWholeNumber(text: string, what: string): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`${what} must be a whole number, got "${text}"`);
  return Number(text);
}

export function parseAmount(text: string): bigint {
  if (!/^[+-]?\d+$/.test(text)) throw new UsageError(`amount must be an integer, got "${text}"`);
  return BigInt(text);
}

/** A membership member id, checked here so a typo is a usage error, not a call. */
export function parseMember(text: string): string {
  try {
    return parseMemberId(text).toString();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export const msPerUnit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** A positive duration: plain milliseconds ("90000") or a whole number with a unit ("1500ms", "30s", "15m", "1h", "7d"). */
export function parseDurationMs(text: string, what: string): number {
  const match = /^(\d+)(ms|s|m|h|d)?$/.exec(text);
  if (match === null) throw new UsageError(`${what} must be a duration such as 90000 (ms), 1500ms, 30s, 15m, 1h or 7d, got "${text}"`);
  // In bigint first: "99999999999999999999d" must fail as too long, not round.
  const durationMs = BigInt(match[1]!) * BigInt(msPerUnit[(match[2] ?? 'ms') as keyof typeof msPerUnit]);
  if (durationMs === 0n) throw new UsageError(`${what} must be longer than 0, got "${text}"`);
  if (durationMs > BigInt(Number.MAX_SAFE_INTEGER)) throw new UsageError(`${what} is too long, got "${text}"`);
  return Number(durationMs);
}

export function expectArgs(args: string[], count: number, shape: string): void {
  if (args.length !== count) throw new UsageError(`expected: tally ${shape}`);
}
