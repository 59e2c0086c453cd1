// The load compare.sh drives against Redis and PostgreSQL: the same counter
// names, seeded draws and check sample as `tally bench` (src/cli/bench/bench-workload.ts),
// so the systems see the same key distribution. Redis is spoken to in RESP over
// a socket (no client package); PostgreSQL through `pg`.
//   node --import tsx bench/compare-load.mts <redis|postgres> <create|increment|page> --target ADDR
//     [--workload zipf|cold|hot] [--counters N] [--zipf-s S] [--seed N] [--run-id ID]
//     [--batch B] [--pipeline] [--wait N] [--concurrency C] [--procs P] [--seconds S]
//     [--rate R] [--page-size P] [--server-pid PID[,PID...]] [--json]
// Redis: increment with --batch B sends B INCRBY per round trip when --pipeline,
// else one INCRBY per round trip (B ignored); --wait N ends each batch with
// `WAIT N 0` (in the same round trip when pipelined: the batch is answered
// once N replicas have it, as a Tally batch is once the follower has it);
// page is MGET. PostgreSQL: increment is one autocommitted upsert of the batch
// (summed per key and sorted, so concurrent batches cannot deadlock); page is
// SELECT ... = ANY.
// --rate paces the run as `tally bench --rate` does: increments/s for
// increment (batches of B: B increments a call), pages/s for page; each call
// is timed from when it was due, so a backlog shows in the percentiles.
// --server-pid: the servers' CPU (those processes and their children, summed;
// e.g. a Redis primary and its replica) is measured over the run. Prints one
// JSON line (--json) or a few lines of text.
import assert from 'node:assert';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import {
  CheckSample,
  CounterNames,
  LatencyHistogram,
  SampleTallies,
  SeededRandom,
  indexPicker,
  processSeed,
  untilDue,
  type Workload,
} from '../src/cli/bench/index.ts';
import { monotonicNowMs } from '../src/wire/index.ts';

type System = 'redis' | 'postgres';
type Mode = 'create' | 'increment' | 'page';

interface Options {
  system: System;
  mode: Mode;
  target: string;
  workload: Workload;
  counters: number;
  zipfExponent: number;
  seed: number;
  runId: string;
  batch: number;
  pipeline: boolean;
  /** Replicas each batch waits for (Redis WAIT N 0); 0: no WAIT. */
  waitReplicas: number;
  concurrency: number;
  procs: number;
  processIndex: number;
  durationMs: number;
  ratePerSec: number;
  pageSize: number;
  serverPids: number[] | undefined;
  json: boolean;
}

function parseOptions(argv: string[]): Options {
  const [system, mode, ...rest] = argv;
  assert(system === 'redis' || system === 'postgres', 'first argument: redis or postgres');
  assert(mode === 'create' || mode === 'increment' || mode === 'page', 'second argument: create, increment or page');
  const flags = new Map<string, string>();
  for (let i = 0; i < rest.length; i++) {
    const name = rest[i]!.replace(/^--/, '');
    if (name === 'pipeline' || name === 'json') flags.set(name, 'true');
    else flags.set(name, rest[++i]!);
  }
  const number = (name: string, fallback: number): number => (flags.has(name) ? Number(flags.get(name)) : fallback);
  return {
    system,
    mode,
    target: flags.get('target') ?? assert.fail('--target is required'),
    workload: (flags.get('workload') ?? (mode === 'page' ? 'page' : 'zipf')) as Workload,
    counters: number('counters', 1_000_000),
    zipfExponent: number('zipf-s', 0.99),
    seed: number('seed', 1),
    runId: flags.get('run-id') ?? 'compare',
    batch: number('batch', 100),
    pipeline: flags.has('pipeline'),
    waitReplicas: number('wait', 0),
    concurrency: number('concurrency', 16),
    procs: number('procs', 1),
    processIndex: number('process-index', -1),
    durationMs: number('seconds', 8) * 1000,
    ratePerSec: number('rate', 0),
    pageSize: number('page-size', 50),
    serverPids: flags.has('server-pid') ? flags.get('server-pid')!.split(',').map(Number) : undefined,
    json: flags.has('json'),
  };
}

// ---------------------------------------------------------------- RESP

type Reply = string | number | null | Reply[] | Error;

/** One Redis connection: commands written back to back, replies matched in order. */
class RespConnection {
  private buffer: Buffer = Buffer.alloc(0);
  private readonly waiting: ((reply: Reply) => void)[] = [];

  private constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
      let offset = 0;
      for (;;) {
        const parsed = parseReply(this.buffer, offset);
        if (parsed === undefined) break;
        offset = parsed.end;
        this.waiting.shift()!(parsed.reply);
      }
      this.buffer = this.buffer.subarray(offset);
    });
  }

  static async open(address: string): Promise<RespConnection> {
    const [host, port] = address.split(':');
    const socket = net.connect(Number(port), host);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new RespConnection(socket);
  }

  /** Sends the commands in one write and resolves with their replies. */
  async send(commands: (string | number)[][]): Promise<Reply[]> {
    const parts: string[] = [];
    for (const command of commands) {
      parts.push(`*${command.length}\r\n`);
      for (const arg of command) {
        const text = String(arg);
        parts.push(`$${Buffer.byteLength(text)}\r\n${text}\r\n`);
      }
    }
    const replies = Promise.all(commands.map(() => new Promise<Reply>((resolve) => this.waiting.push(resolve))));
    this.socket.write(parts.join(''));
    const answered = await replies;
    for (const reply of answered) if (reply instanceof Error) throw reply;
    return answered;
  }

  close(): void {
    this.socket.end();
  }
}

/** One RESP reply at offset, or undefined when the buffer does not hold all of it yet. */
function parseReply(buffer: Buffer, offset: number): { reply: Reply; end: number } | undefined {
  const lineEnd = buffer.indexOf('\r\n', offset);
  if (lineEnd < 0) return undefined;
  const type = String.fromCharCode(buffer[offset]!);
  const line = buffer.toString('latin1', offset + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case '+':
      return { reply: line, end: next };
    case '-':
      return { reply: new Error(line), end: next };
    case ':':
      return { reply: Number(line), end: next };
    case '$': {
      const length = Number(line);
      if (length < 0) return { reply: null, end: next };
      if (buffer.length < next + length + 2) return undefined;
      return { reply: buffer.toString('utf8', next, next + length), end: next + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { reply: null, end: next };
      const items: Reply[] = [];
      let end = next;
      for (let i = 0; i < count; i++) {
        const item = parseReply(buffer, end);
        if (item === undefined) return undefined;
        items.push(item.reply);
        end = item.end;
      }
      return { reply: items, end };
    }
    default:
      throw new Error(`unexpected RESP reply type ${JSON.stringify(type)}`);
  }
}

// ---------------------------------------------------------------- the two systems

/** What the load needs from a system: one connection per loop. */
interface Connection {
  incrementBatch(counters: string[]): Promise<void>;
  /** Exact values (0 for an absent key). */
  readMany(counters: string[]): Promise<bigint[]>;
  create(counters: string[]): Promise<void>;
  close(): Promise<void>;
}

async function connect(options: Options): Promise<Connection> {
  if (options.system === 'redis') {
    const redis = await RespConnection.open(options.target);
    return {
      async incrementBatch(counters) {
        const wait: (string | number)[][] = options.waitReplicas > 0 ? [['WAIT', options.waitReplicas, 0]] : [];
        let replies: Reply[];
        if (options.pipeline) replies = await redis.send([...counters.map((counter) => ['INCRBY', counter, 1]), ...wait]);
        else {
          for (const counter of counters) await redis.send([['INCRBY', counter, 1]]);
          replies = wait.length > 0 ? await redis.send(wait) : [];
        }
        // WAIT answers how many replicas acknowledged; with timeout 0 it blocks until enough do.
        if (wait.length > 0 && (replies.at(-1) as number) < options.waitReplicas)
          throw new Error(`WAIT: ${String(replies.at(-1))} of ${options.waitReplicas} replicas acknowledged`);
      },
      async readMany(counters) {
        const [values] = (await redis.send([['MGET', ...counters]])) as [(string | null)[]];
        return values.map((value) => BigInt(value ?? 0));
      },
      async create(counters) {
        await redis.send([['MSET', ...counters.flatMap((counter) => [counter, '1'])]]);
      },
      async close() {
        redis.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: options.target });
  await client.connect();
  return {
    async incrementBatch(counters) {
      // Summed per key (ON CONFLICT cannot touch a row twice in one statement) and sorted (no deadlocks between batches).
      const sums = new Map<string, number>();
      for (const counter of counters) sums.set(counter, (sums.get(counter) ?? 0) + 1);
      const keys = [...sums.keys()].sort();
      await client.query(
        'INSERT INTO counters (k, n) SELECT * FROM unnest($1::text[], $2::bigint[]) ON CONFLICT (k) DO UPDATE SET n = counters.n + excluded.n',
        [keys, keys.map((key) => sums.get(key)!)],
      );
    },
    async readMany(counters) {
      const result = await client.query<{ k: string; n: string }>('SELECT k, n FROM counters WHERE k = ANY($1::text[])', [counters]);
      const byKey = new Map(result.rows.map((row) => [row.k, BigInt(row.n)]));
      return counters.map((counter) => byKey.get(counter) ?? 0n);
    },
    async create(counters) {
      await client.query('INSERT INTO counters (k, n) SELECT unnest($1::text[]), 1 ON CONFLICT (k) DO NOTHING', [counters]);
    },
    async close() {
      await client.end();
    },
  };
}

async function prepare(options: Options): Promise<void> {
  if (options.system !== 'postgres') return;
  const client = new pg.Client({ connectionString: options.target });
  await client.connect();
  await client.query('CREATE TABLE IF NOT EXISTS counters (k text PRIMARY KEY, n bigint NOT NULL)');
  await client.end();
}

/**
 * CPU seconds of a process and its children so far (Linux /proc; clock ticks
 * of 1/100 s): its own time, the time of its children that ended (cutime,
 * cstime: PostgreSQL's backends end with their connections) and of those alive.
 */
function processTreeCpuSeconds(pid: number): number {
  let ticks = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // After the command: state, ppid, ..., utime, stime, cutime, cstime (fields 14-17 of the line).
      const fields = stat
        .slice(stat.lastIndexOf(')') + 2)
        .split(' ')
        .map(Number);
      if (Number(entry) === pid) ticks += fields[11]! + fields[12]! + fields[13]! + fields[14]!;
      else if (fields[1] === pid) ticks += fields[11]! + fields[12]!;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return ticks / 100;
}

// ---------------------------------------------------------------- the runs

interface ProcessResult {
  calls: number;
  items: number;
  errors: number;
  histogram: number[];
  maxMicros: number;
  okBySlot: number[];
  unknownBySlot: number[];
  cpuMicros: number;
  elapsedMs: number;
}

/** One load-generating process: `concurrency` loops, each with its own connection. */
async function runProcess(options: Options, processIndex: number): Promise<ProcessResult> {
  const names = new CounterNames(options.runId);
  const pick = indexPicker(
    { workload: options.workload, counters: options.counters, zipfExponent: options.zipfExponent },
    new SeededRandom(processSeed(options.seed, processIndex)),
  );
  const tallies = new SampleTallies(new CheckSample(options.counters));
  const histogram = new LatencyHistogram();
  const page = options.mode === 'page';
  const itemsPerCall = page ? options.pageSize : options.batch;
  const connections = await Promise.all(Array.from({ length: options.concurrency }, () => connect(options)));
  let calls = 0;
  let items = 0;
  let errors = 0;
  // Each loop paces itself when a rate is set: its share of the target (increments/s, or pages/s), as tally bench does.
  const loopIntervalMs =
    options.ratePerSec > 0 ? (options.concurrency * options.procs * (page ? 1 : options.batch) * 1000) / options.ratePerSec : 0;
  const startedMs = monotonicNowMs();
  const startedCpu = process.cpuUsage();
  const endMs = startedMs + options.durationMs;
  await Promise.all(
    connections.map(async (connection, loop) => {
      for (let sent = 0; ; sent++) {
        let callStartMs = await untilDue({ startedMs, loopIntervalMs, concurrency: options.concurrency }, loop, sent);
        if (monotonicNowMs() >= endMs) return;
        const indexes = Array.from({ length: itemsPerCall }, pick);
        const counters = indexes.map((index) => names.name(index));
        if (loopIntervalMs === 0) callStartMs = monotonicNowMs();
        try {
          if (page) {
            const values = await connection.readMany(counters);
            if (values.some((value) => value === 0n)) errors++;
          } else {
            await connection.incrementBatch(counters);
            for (const index of indexes) tallies.add(index, 1, true);
          }
          histogram.record((monotonicNowMs() - callStartMs) * 1000);
          items += counters.length;
        } catch (error) {
          errors++;
          if (!page) for (const index of indexes) tallies.add(index, 1, false);
          if (errors === 1) process.stderr.write(`${options.system}: ${(error as Error).message}\n`);
        }
        calls++;
      }
    }),
  );
  const cpu = process.cpuUsage(startedCpu);
  const elapsedMs = monotonicNowMs() - startedMs;
  await Promise.all(connections.map((connection) => connection.close()));
  return {
    calls,
    items,
    errors,
    histogram: histogram.counts,
    maxMicros: histogram.maxMicros,
    okBySlot: Array.from(tallies.ok),
    unknownBySlot: Array.from(tallies.unknown),
    cpuMicros: cpu.user + cpu.system,
    elapsedMs,
  };
}

async function runProcesses(options: Options, argv: string[]): Promise<ProcessResult[]> {
  if (options.procs === 1) return [await runProcess(options, 0)];
  const script = fileURLToPath(import.meta.url);
  return Promise.all(
    Array.from({ length: options.procs }, (_, index) => {
      const child = spawn(process.execPath, ['--import', 'tsx', script, ...argv, '--process-index', String(index)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      return new Promise<ProcessResult>((resolve, reject) => {
        let result: ProcessResult | undefined;
        readline.createInterface({ input: child.stdout }).on('line', (line) => (result = JSON.parse(line) as ProcessResult));
        child.on('exit', (code) => (result ? resolve(result) : reject(new Error(`load process ${index} exited with code ${code}`))));
      });
    }),
  );
}

/** The check sample's counters (the population's: Redis and PostgreSQL runs have no hot counter unless --workload hot). */
function sampleCounters(options: Options, sample: CheckSample): { slots: number[]; names: string[] } {
  const names = new CounterNames(options.runId);
  const slots = options.workload === 'hot' ? [0] : Array.from({ length: sample.size - 1 }, (_, i) => i + 1);
  return { slots, names: slots.map((slot) => names.name(sample.indexOf(slot))) };
}

async function readAll(options: Options, counters: string[]): Promise<bigint[]> {
  const connection = await connect(options);
  const values: bigint[] = [];
  for (let offset = 0; offset < counters.length; offset += 1_000)
    values.push(...(await connection.readMany(counters.slice(offset, offset + 1_000))));
  await connection.close();
  return values;
}

async function create(options: Options): Promise<Record<string, unknown>> {
  const names = new CounterNames(options.runId);
  const startedMs = monotonicNowMs();
  const connections = await Promise.all(Array.from({ length: 4 }, () => connect(options)));
  let next = 0;
  await Promise.all(
    connections.map(async (connection) => {
      while (next < options.counters) {
        const first = next;
        next = Math.min(options.counters, next + 1_000);
        await connection.create(Array.from({ length: next - first }, (_, i) => names.name(first + i)));
      }
    }),
  );
  await Promise.all(connections.map((connection) => connection.close()));
  const durationMs = monotonicNowMs() - startedMs;
  return {
    counters: options.counters,
    durationMs: Math.round(durationMs),
    countersPerSec: Math.round((options.counters * 1000) / durationMs),
  };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const options = parseOptions(argv);
  if (options.processIndex >= 0) {
    // A child of a multi-process run: its result on one line for the parent.
    process.stdout.write(`${JSON.stringify(await runProcess(options, options.processIndex))}\n`);
    return;
  }
  await prepare(options);
  if (options.mode === 'create') {
    const creation = await create(options);
    process.stdout.write(
      `${options.json ? JSON.stringify({ creation }) : `created ${options.counters} counters in ${Number(creation.durationMs) / 1000} s`}\n`,
    );
    return;
  }
  const sample = new CheckSample(options.counters);
  const { slots, names } = sampleCounters(options, sample);
  const checked = options.mode === 'increment';
  const baseline = checked ? await readAll(options, names) : [];
  const serverCpu = (): number => (options.serverPids ?? []).reduce((sum, pid) => sum + processTreeCpuSeconds(pid), 0);
  const serverCpuBefore = serverCpu();
  const results = await runProcesses(options, argv);
  const serverCpuSeconds = options.serverPids === undefined ? undefined : serverCpu() - serverCpuBefore;
  let failures = 0;
  if (checked) {
    const totals = await readAll(options, names);
    slots.forEach((slot, at) => {
      const low = baseline[at]! + BigInt(results.reduce((sum, result) => sum + result.okBySlot[slot]!, 0));
      const unknown = BigInt(results.reduce((sum, result) => sum + result.unknownBySlot[slot]!, 0));
      if (totals[at]! < low || totals[at]! > low + unknown) failures++;
    });
  }
  const histogram = new LatencyHistogram();
  for (const result of results) {
    const other = new LatencyHistogram(result.histogram);
    other.maxMicros = result.maxMicros;
    histogram.merge(other);
  }
  const elapsedMs = Math.max(...results.map((result) => result.elapsedMs));
  const items = results.reduce((sum, result) => sum + result.items, 0);
  const calls = results.reduce((sum, result) => sum + result.calls, 0);
  const loadGeneratorCpuSeconds = results.reduce((sum, result) => sum + result.cpuMicros, 0) / 1e6;
  const summary = {
    system: options.system,
    mode: options.mode,
    pipeline: options.pipeline,
    waitReplicas: options.waitReplicas,
    ratePerSec: options.ratePerSec,
    workload: options.workload,
    counters: options.counters,
    batch: options.batch,
    concurrency: options.concurrency,
    procs: options.procs,
    itemsPerSec: Math.round((items * 1000) / elapsedMs),
    callsPerSec: Math.round((calls * 1000) / elapsedMs),
    items,
    calls,
    errors: results.reduce((sum, result) => sum + result.errors, 0),
    latencyMs: { p50: histogram.quantileMs(0.5), p99: histogram.quantileMs(0.99), max: histogram.maxMicros / 1000 },
    loadGeneratorCpuSeconds,
    serverCpuSeconds,
    check: checked ? { counters: names.length, passed: failures === 0, failures } : undefined,
  };
  process.stdout.write(
    options.json
      ? `${JSON.stringify(summary)}\n`
      : `${options.system} ${options.mode}: ${summary.itemsPerSec} items/s, ${summary.callsPerSec} calls/s, p50 ${summary.latencyMs.p50.toFixed(2)} ms, p99 ${summary.latencyMs.p99.toFixed(2)} ms, errors ${summary.errors}, check ${summary.check === undefined ? 'none' : summary.check.passed ? 'passed' : `FAILED (${failures})`}\n`,
  );
  if (summary.check !== undefined && !summary.check.passed) process.exitCode = 3;
}

await main();
