// Structured JSON log lines (pino) on stderr, one per lifecycle event (start,
// ready, promotion, growth, shutdown...). Never one per increment at the
// default level. Synchronous writes: the few lines we log must survive an
// exit right after them.
import pino from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const levels: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** bigint fields (lsn, epoch, totals) as decimal strings: JSON has no int64. */
function plain(fields: Record<string, unknown> | undefined): Record<string, unknown> {
  if (fields === undefined) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) out[key] = typeof value === 'bigint' ? value.toString() : value;
  return out;
}

export function createLogger(component: string, level: LogLevel = 'info'): Logger {
  const base = pino(
    {
      level,
      base: { component, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Level names, not numbers: operators grep for "level":"warn".
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination({ fd: 2, sync: true }),
  );
  return {
    debug: (msg, fields) => base.debug(plain(fields), msg),
    info: (msg, fields) => base.info(plain(fields), msg),
    warn: (msg, fields) => base.warn(plain(fields), msg),
    error: (msg, fields) => base.error(plain(fields), msg),
  };
}

export function isLogLevel(value: string): value is LogLevel {
  return (levels as readonly string[]).includes(value);
}
