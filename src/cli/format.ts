// How the CLI prints: durations, plurals, describe's notes, and --json or
// readable text.
import { type ConfigureOptions, type CounterDescription } from '../client/index.ts';
import { msPerUnit } from './args.ts';

/** What describe adds for counters beyond plain totals. */
export function kindNote(description: CounterDescription): string {
  if (description.kind !== 'total') return `, ${description.kind} counter`;
  if (description.windowBucketMs > 0)
    return `, window ${formatDuration(description.windowRetentionMs)} in ${formatDuration(description.windowBucketMs)} buckets`;
  return '';
}

/** "ttl 7d (default)", "ttl 1h", "no ttl" or "never expires". */
export function ttlNote(description: CounterDescription): string {
  if (description.ttlFrom === 'never') return 'never expires';
  if (description.ttlMs === 0) return 'no ttl';
  return `ttl ${formatDuration(description.ttlMs)}${description.ttlFrom === 'default' ? ' (default)' : ''}`;
}

/** The largest unit that divides durationMs evenly: 3600000 is "1h", 1500 is "1500ms". */
export function formatDuration(durationMs: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (durationMs > 0 && durationMs % msPerUnit[unit] === 0) return `${durationMs / msPerUnit[unit]}${unit}`;
  }
  return `${durationMs}ms`;
}

export function plural(count: number | bigint, noun: string): string {
  return `${count} ${noun}${count === 1 || count === 1n ? '' : 's'}`;
}

export function print(json: boolean, value: unknown, text: string): void {
  process.stdout.write(
    json ? `${JSON.stringify(value, (_key, field) => (typeof field === 'bigint' ? field.toString() : field))}\n` : `${text}\n`,
  );
}

/** "c: autoscale on, 1 shard", with the kind and window when there is something to say. */
export function configureLine(description: CounterDescription, options: ConfigureOptions): string {
  const kind = description.kind === 'total' ? '' : `${description.kind} counter, `;
  const shards = plural(description.shards, description.kind === 'membership' ? 'partition' : 'shard');
  const window =
    description.windowBucketMs > 0
      ? `, window ${formatDuration(description.windowRetentionMs)} in ${formatDuration(description.windowBucketMs)} buckets`
      : options.window !== undefined
        ? ', no window'
        : '';
  return `${description.counter}: ${kind}autoscale ${description.autoscale ? 'on' : 'off'}, ${shards}${window}${options.ttlMs !== undefined ? `, ${ttlNote(description)}` : ''}`;
}
