// `tally top`: the hottest counters (rate, peak, shards, skew and a bar per
// shard) and the nodes below, refreshed every interval. A live screen on a
// TTY (q or Ctrl-C quits); plain periodic blocks of lines otherwise; with
// --json one JSON object per refresh, one per line.
import type { TallyClient, HotCounter, ClusterStatus } from '../../client/index.ts';

const bars = ' ▁▂▃▄▅▆▇█';

function shardBar(rates: readonly number[], width: number): string {
  const max = Math.max(...rates, 0);
  const cells = rates
    .slice(0, Math.max(0, width))
    .map((rate) => (max === 0 ? bars[0] : bars[Math.round((rate / max) * (bars.length - 1))]));
  return cells.join('') + (rates.length > width ? '…' : '');
}

function number(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

export function renderTop(
  hot: { counters: HotCounter[]; tracked: number },
  status: ClusterStatus | undefined,
  options: { columns: number; rows: number; router: string; nowMs: number; tty: boolean },
): string[] {
  const nameWidth = Math.max(8, Math.min(40, Math.max(0, ...hot.counters.map((entry) => entry.counter.length))));
  const fixedWidth = nameWidth + 10 + 10 + 8 + 7 + 4;
  const barWidth = Math.max(0, options.columns - fixedWidth);
  const lines = [
    `tally top  ${options.router}  ${new Date(options.nowMs).toISOString().slice(11, 19)}  ${hot.tracked} counter${hot.tracked === 1 ? '' : 's'} with heat${options.tty ? '  (q quits)' : ''}`,
    `${'COUNTER'.padEnd(nameWidth)}  ${'RATE/S'.padStart(8)}  ${'PEAK/S'.padStart(8)}  ${'SHARDS'.padStart(6)}  ${'SKEW'.padStart(5)}  PER-SHARD`,
    ...hot.counters.map((entry) => {
      const name = entry.counter.length > nameWidth ? `${entry.counter.slice(0, nameWidth - 1)}…` : entry.counter.padEnd(nameWidth);
      return `${name}  ${number(entry.ratePerSec).padStart(8)}  ${number(entry.peakPerSec).padStart(8)}  ${String(entry.shards).padStart(6)}  ${entry.skew.toFixed(2).padStart(5)}  ${shardBar(entry.shardRates, barWidth)}`;
    }),
    '',
    'NODES',
    ...(status?.nodes ?? []).map(
      (node) =>
        `pair ${node.pair}  ${node.role.padEnd(8)}  ${node.address.padEnd(21)}  ${node.health.padEnd(11)}  epoch ${node.epoch}  ${node.inSync ? 'in sync' : 'OUT OF SYNC'}  lsn ${node.lastLsn}${node.role === 'follower' ? `  lag ${node.replicationLagEntries}` : ''}`,
    ),
  ];
  if (status === undefined) lines.push('(cluster status unavailable)');
  // Fit the terminal: cut long lines, drop counters that do not fit.
  const fitted = lines.map((line) => (line.length > options.columns ? line.slice(0, Math.max(1, options.columns - 1)) + '…' : line));
  if (options.tty && fitted.length > options.rows) {
    const nodeLines = fitted.slice(fitted.indexOf('NODES') - 1);
    const counterLines = fitted.slice(0, Math.max(2, options.rows - nodeLines.length));
    return [...counterLines, ...nodeLines].slice(0, options.rows);
  }
  return fitted;
}

export async function runTop(
  client: TallyClient,
  options: { router: string; limit: number; intervalMs: number; iterations: number; json?: boolean },
): Promise<void> {
  const json = options.json === true;
  const tty = process.stdout.isTTY === true && !json;
  let quit = false;
  let wake: (() => void) | undefined;
  const stop = (): void => {
    quit = true;
    wake?.();
  };
  if (tty && process.stdin.isTTY) {
    process.stdin.setRawMode(true);
    process.stdin.resume();
    process.stdin.on('data', (data: Buffer) => {
      const key = data.toString();
      if (key === 'q' || key === 'Q' || key === '\u0003') stop();
    });
  }
  process.once('SIGINT', stop);
  process.stdout.on('resize', () => wake?.());
  try {
    for (let iteration = 0; !quit && (options.iterations === 0 || iteration < options.iterations); iteration++) {
      const [hot, status] = await Promise.all([client.hot(options.limit), client.clusterStatus().catch(() => undefined)]);
      if (json) {
        // eslint-disable-next-line no-restricted-properties -- the time of day the sample was taken
        const sample = { atUnixMs: Date.now(), router: options.router, hot, status: status ?? null };
        process.stdout.write(`${JSON.stringify(sample, (_key, field) => (typeof field === 'bigint' ? field.toString() : field))}\n`);
      }
      const lines = json
        ? []
        : renderTop(hot, status, {
            columns: tty ? process.stdout.columns || 80 : 200,
            rows: tty ? process.stdout.rows || 24 : Number.MAX_SAFE_INTEGER,
            router: options.router,
            // eslint-disable-next-line no-restricted-properties -- the time of day shown in the header
            nowMs: Date.now(),
            tty,
          });
      if (!json) process.stdout.write(tty ? `\x1b[H\x1b[2J${lines.join('\n')}` : `${lines.join('\n')}\n\n`);
      if (options.iterations !== 0 && iteration + 1 >= options.iterations) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, options.intervalMs);
      });
      wake = undefined;
    }
  } finally {
    if (tty) {
      process.stdout.write('\n');
      if (process.stdin.isTTY) process.stdin.setRawMode(false);
      process.stdin.pause();
    }
    process.removeListener('SIGINT', stop);
  }
}
