// Structured JSON log lines on stderr, one per lifecycle event. Never one per
// increment at the default level.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
const levelRank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(component: string, level: LogLevel = 'info'): Logger {
  const threshold = levelRank[level];
  const write = (lineLevel: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (levelRank[lineLevel] < threshold) return;
    const line = { time: new Date().toISOString(), level: lineLevel, component, pid: process.pid, msg, ...fields };
    process.stderr.write(`${JSON.stringify(line, (_key, value) => (typeof value === 'bigint' ? value.toString() : value))}\n`);
  };
  return {
    debug: (msg, fields) => write('debug', msg, fields),
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
  };
}

export function isLogLevel(value: string): value is LogLevel {
  return Object.hasOwn(levelRank, value);
}
