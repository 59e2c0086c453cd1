// The client host's program: runs inside the client's network namespace (the
// harness's own process cannot reach the hosts' bridge), one public client per
// router. Takes JSON-line commands on stdin, answers on stdout, and streams
// every operation the load makes as a history record. It never judges results.
// Usage: client-agent.ts <router address>...
import { credentials, status, type ServiceError } from '@grpc/grpc-js';
import { CounterServiceClient, type counterV1 } from '../../../../src/common/index.ts';
import { createTallyClient, TallyError, type TallyClient } from '../../../../src/client/index.ts';
import { seededRandom } from '../../seeded-random.ts';
import {
  machineMonotonicMs,
  operationToJson,
  type IncrementOperation,
  type Operation,
  type Outcome,
  type ReadOperation,
} from '../check/index.ts';
import type { AgentCommand, LoadOptions } from './protocol.ts';
import { pause } from '../../pause.ts';

// Statuses that mean the router refused before anything was sent anywhere (as test/helpers/load.ts).
const certainlyNotApplied = new Set<number>([status.INVALID_ARGUMENT, status.OUT_OF_RANGE, status.NOT_FOUND, status.RESOURCE_EXHAUSTED]);

function outcomeOf(error: unknown): Outcome {
  return error instanceof TallyError && certainlyNotApplied.has(error.grpcCode) ? 'failed' : 'unknown';
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.slice(0, 200);
}

const addresses = process.argv.slice(2);
// One attempt per call: every attempt is in the history, and a keyed retry is the load's own.
const clients: TallyClient[] = addresses.map((address) => createTallyClient({ address, deadlineMs: 3_000, attemptsMax: 1 }));
// SCOPE_GLOBAL reads through the generated client: the request as the wire has it.
interface RawReadClient {
  Read(
    request: counterV1.ReadRequest,
    options: { deadline: number },
    callback: (error: ServiceError | null, response?: counterV1.ReadResponse__Output) => void,
  ): void;
  close(): void;
}
const rawClients = addresses.map((address) => new CounterServiceClient(address, credentials.createInsecure()) as unknown as RawReadClient);
let nextId = 1;

function emit(message: unknown): void {
  process.stdout.write(`${JSON.stringify(message, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value))}\n`);
}

function record(operation: Operation): Operation {
  process.stdout.write(`{"op":${operationToJson(operation)}}\n`);
  return operation;
}

async function increment(
  router: number,
  counter: string,
  amount: bigint,
  key: string | undefined,
  deadlineMs: number,
): Promise<IncrementOperation> {
  const startMs = machineMonotonicMs();
  const base = { id: nextId++, kind: 'increment' as const, router, counter, amount, ...(key === undefined ? {} : { key }), startMs };
  try {
    const result = await clients[router]!.increment(counter, amount, { idempotencyKey: key ?? null, deadlineMs });
    return record({ ...base, endMs: machineMonotonicMs(), outcome: 'ok', applied: result.applied }) as IncrementOperation;
  } catch (error) {
    return record({ ...base, endMs: machineMonotonicMs(), outcome: outcomeOf(error), error: errorText(error) }) as IncrementOperation;
  }
}

async function read(router: number, counter: string, deadlineMs: number, final: boolean): Promise<ReadOperation> {
  const startMs = machineMonotonicMs();
  const base = { id: nextId++, kind: 'read' as const, router, counter, startMs, ...(final ? { final } : {}) };
  try {
    const result = await clients[router]!.read(counter, { deadlineMs });
    return record({ ...base, endMs: machineMonotonicMs(), outcome: 'ok', total: result.total }) as ReadOperation;
  } catch (error) {
    return record({ ...base, endMs: machineMonotonicMs(), outcome: outcomeOf(error), error: errorText(error) }) as ReadOperation;
  }
}

/** int64 fields as decimal strings (bigints do not survive JSON), times as numbers. */
function globalRead(router: number, counter: string, deadlineMs: number): Promise<unknown> {
  return new Promise((resolve, reject) =>
    rawClients[router]!.Read({ counter, scope: 'SCOPE_GLOBAL' }, { deadline: Date.now() + deadlineMs }, (error, response) => {
      if (error !== null || response === undefined) return reject(error ?? new Error('no response'));
      resolve({
        counter: response.counter,
        total: String(response.total),
        exact: response.exact,
        regions: response.regions.map((part) => ({
          region: part.region,
          total: String(part.total),
          asOfUnixMs: Number(part.asOfUnixMs),
          stalenessMs: Number(part.stalenessMs),
          home: part.home,
        })),
      });
    }),
  );
}

interface RunningLoad {
  stop: () => Promise<void>;
}
let load: RunningLoad | undefined;

/**
 * Writers on every router: unkeyed increments, keyed ones (retried with the
 * same key, through any router, after an unknown outcome), exact reads, and
 * now and then a duplicate of a key already acknowledged (must not count).
 */
function startLoad(options: LoadOptions): RunningLoad {
  let running = true;
  const random = seededRandom(options.seed);
  const acknowledgedKeys: { key: string; counter: string; amount: bigint }[] = [];
  const writers = Array.from({ length: options.writersPerRouter * clients.length }, async (_, writer) => {
    const router = writer % clients.length;
    let sequence = 0;
    while (running) {
      const counter = options.counters[Math.floor(random() * options.counters.length)]!;
      const amount = BigInt(1 + Math.floor(random() * 9));
      const draw = random();
      let settled: boolean;
      if (draw < options.readShare) {
        settled = (await read(router, counter, options.deadlineMs, false)).outcome === 'ok';
      } else if (draw < options.readShare + options.duplicateShare && acknowledgedKeys.length > 0) {
        const again = acknowledgedKeys[Math.floor(random() * acknowledgedKeys.length)]!;
        settled = (await increment(router, again.counter, again.amount, again.key, options.deadlineMs)).outcome === 'ok';
      } else if (draw < options.readShare + options.duplicateShare + options.keyedShare) {
        const key = `${options.keyPrefix}w${writer}-${sequence++}`;
        let attempt = await increment(router, counter, amount, key, options.deadlineMs);
        // An unknown outcome is retried with the same key until it is known; at stop, it stays unknown.
        for (let retry = 1; attempt.outcome === 'unknown' && running; retry++) {
          await pause(Math.min(50 * retry, 500));
          attempt = await increment(Math.floor(random() * clients.length), counter, amount, key, options.deadlineMs);
        }
        if (attempt.outcome === 'ok') {
          acknowledgedKeys.push({ key, counter, amount });
          if (acknowledgedKeys.length > 1_000) acknowledgedKeys.shift();
        }
        settled = attempt.outcome === 'ok';
      } else {
        settled = (await increment(router, counter, amount, undefined, options.deadlineMs)).outcome === 'ok';
      }
      // Pacing: a steady trickle, and a little more room while calls fail (a dead shard must not spin a writer).
      await pause(options.pauseMs + (settled ? 0 : 20 + Math.floor(random() * 30)));
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(writers);
    },
  };
}

async function handle(command: AgentCommand): Promise<unknown> {
  switch (command.cmd) {
    case 'status':
      return clients[command.router]!.clusterStatus({ deadlineMs: command.deadlineMs });
    case 'increment':
      return increment(command.router, command.counter, BigInt(command.amount), command.key, command.deadlineMs);
    case 'read':
      return read(command.router, command.counter, command.deadlineMs, command.final ?? false);
    case 'globalRead':
      // Not in the history: the checker's rules are for exact reads; a test judges global reads itself.
      return globalRead(command.router, command.counter, command.deadlineMs);
    case 'startLoad':
      if (load !== undefined) throw new Error('a load is already running');
      load = startLoad(command.options);
      return true;
    case 'stopLoad': {
      const running = load;
      load = undefined;
      await running?.stop();
      return true;
    }
  }
}

process.stdin.setEncoding('utf8');
let pending = '';
process.stdin.on('data', (chunk: string) => {
  pending += chunk;
  const lines = pending.split('\n');
  pending = lines.pop()!;
  for (const line of lines) {
    if (line.trim() === '') continue;
    const command = JSON.parse(line) as AgentCommand & { id: number };
    handle(command).then(
      (value) => emit({ reply: command.id, value }),
      (error: unknown) => emit({ reply: command.id, error: errorText(error) }),
    );
  }
});
// The harness's end of stdin closed: it is gone, so are we.
process.stdin.on('end', () => {
  for (const client of clients) client.close();
  for (const client of rawClients) client.close();
  process.exit(0);
});
emit({ ready: true });
