// The relay's operating errors: one type, a code to match on, a message that
// is one line fit for an operator (never a password, never a stack).

export const RelayErrorCode = {
  /** Cannot connect to, or authenticate with, PostgreSQL. */
  connect: 'connect',
  /** A table is missing or has the wrong columns. */
  schema: 'schema',
  /** Rows of unknown fate are older than the dedup window: an operator decides (tally relay --resolve). */
  beyondWindow: 'beyond_window',
  /** The relay's --dedup-window-ms is longer than the cluster's, or the cluster would not say its window. */
  window: 'window',
  /** The outbox's ids may repeat ones already sent under this key namespace (an identity reset, a restore, a recreated table). */
  identity: 'identity',
  /** A command's input (rows named for --resolve, say) does not fit the data. */
  invalid: 'invalid',
} as const;
export type RelayErrorCode = (typeof RelayErrorCode)[keyof typeof RelayErrorCode];

export class RelayError extends Error {
  constructor(
    readonly code: RelayErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'RelayError';
  }
}

/** host:port/db of a URL, for messages: never its user or password. */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}${parsed.pathname}`;
  } catch {
    return 'the --postgres URL';
  }
}

/** One line for any PostgreSQL or network error: its SQLSTATE or errno and first line. */
export function oneLine(error: unknown): string {
  if (!(error instanceof Error)) return String(error).split('\n')[0]!;
  const code = (error as { code?: unknown }).code;
  const first = error.message.split('\n')[0]!;
  return typeof code === 'string' && !first.includes(code) ? `${first} (${code})` : first;
}
