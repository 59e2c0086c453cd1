// CounterService's total reads: Read, ReadMany (each ReadStream page too) and
// ReadWindow, with the checks of consistency and scope they share. Reads
// change nothing: any failure of theirs is NOT_APPLIED.
import {
  ErrorCode,
  TallyError,
  encodeRegionPart,
  parseInt64,
  readManyCountersMax,
  validateCounterName,
  type LeanReadManyRequest,
  type ReadManyResponseInput,
  type ReadResponseInput,
} from '../../../wire/index.ts';
import type { counterV1 } from '../../../common/index.ts';
import type { RouterMetrics } from '../../metrics/index.ts';
import type { ReadPath, TotalRead, WindowReader } from '../../read/index.ts';
import type { GlobalRead, GlobalReader, RegionPartRead } from '../../region/index.ts';
import { validateCounterNames } from '../validation.ts';
import { handler } from '../handler.ts';

function toReadResponse(read: TotalRead): counterV1.ReadResponse__Output {
  return {
    counter: read.counter,
    total: read.total.toString(),
    exact: read.exact,
    asOfUnixMs: String(read.asOfMs),
    stalenessMs: String(read.stalenessMs),
    shards: read.shardCount,
    regions: (read as Partial<GlobalRead>).regions?.map(toRegionPart) ?? [],
  };
}

function toRegionPart(part: RegionPartRead): counterV1.RegionPart__Output {
  return {
    region: part.region,
    total: part.total.toString(),
    asOfUnixMs: String(part.asOfUnixMs),
    stalenessMs: String(part.stalenessMs),
    home: part.home,
  };
}

/** A value of ReadMany's response, for the lean encoder: int64s as they are (no decimal string each). */
function toLeanReadResponse(read: TotalRead): ReadResponseInput {
  return {
    counter: read.counter,
    total: read.total,
    exact: read.exact,
    asOfUnixMs: read.asOfMs,
    stalenessMs: read.stalenessMs,
    shards: read.shardCount,
    ...((read as Partial<GlobalRead>).regions === undefined
      ? {}
      : { regionParts: (read as GlobalRead).regions.map((part) => encodeRegionPart(part)) }),
  };
}

export function validateScope(scope: string | number | undefined): string {
  if (scope === undefined || scope === 'SCOPE_REGION' || scope === 'SCOPE_GLOBAL') return scope ?? 'SCOPE_REGION';
  throw new TallyError(ErrorCode.invalidArgument, `scope must be SCOPE_REGION or SCOPE_GLOBAL, got ${scope}`);
}

// A number: a value the enum does not name (proto-loader's and the lean decoder's way of passing it on).
export function validateConsistency(consistency: string | number): string {
  if (consistency !== 'EXACT' && consistency !== 'CACHED') {
    throw new TallyError(ErrorCode.invalidArgument, `consistency must be EXACT or CACHED, got ${consistency}`);
  }
  return consistency as string;
}

/** What the total reads are handed to. */
export interface ReadDeps {
  reads: ReadPath;
  windows: WindowReader;
  /** SCOPE_GLOBAL reads (docs/regions.md). */
  globalReads: Pick<GlobalReader, 'read'>;
  metrics: RouterMetrics;
}

/** A read timed in the read latency histogram under its consistency label. */
export type TimedRead = <T>(consistency: string, read: () => Promise<T>) => Promise<T>;

/** The read handlers and the two reads the rest of the service shares: timed reads and totals by name. */
export function createReadHandlers(deps: ReadDeps) {
  const timedRead: TimedRead = async (consistency, read) => {
    const timer = deps.metrics.readLatency.startTimer({ consistency: consistency.toLowerCase() });
    try {
      return await read();
    } finally {
      timer();
    }
  };

  // A distinct counter among names is refused by the read path, where each name is resolved once.
  const readTotals = (names: string[], consistency: string, scope: string = 'SCOPE_REGION'): Promise<TotalRead[]> => {
    if (scope === 'SCOPE_GLOBAL')
      return timedRead(`global_${consistency}`, () => deps.globalReads.read(names, consistency as 'EXACT' | 'CACHED'));
    return timedRead(consistency, () => (consistency === 'CACHED' ? deps.reads.readCached(names) : deps.reads.readExact(names)));
  };

  // ReadMany's whole body, shared with each page of a ReadStream.
  const readPage = async (request: LeanReadManyRequest): Promise<ReadManyResponseInput> => {
    const names = validateCounterNames(request.counters, readManyCountersMax, 'ReadMany');
    const values = await readTotals(names, validateConsistency(request.consistency), validateScope(request.scope));
    return { values: values.map(toLeanReadResponse) };
  };

  const changesNothing = true;
  const handlers = {
    Read: handler<counterV1.ReadRequest__Output, counterV1.ReadResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const [read] = await readTotals([name], validateConsistency(request.consistency), validateScope(request.scope));
      return toReadResponse(read!);
    }, changesNothing),

    // Lean codec both ways (common/counter-codec.ts, wired in build.ts): a page's totals go out without a string per int64.
    ReadMany: handler<LeanReadManyRequest, ReadManyResponseInput>(readPage, changesNothing),

    ReadWindow: handler<counterV1.ReadWindowRequest__Output, counterV1.ReadWindowResponse__Output>(async (request) => {
      const name = validateCounterName(request.counter);
      const consistency = validateConsistency(request.consistency);
      const lastMs = parseInt64(request.lastMs, 'last_ms');
      if (lastMs <= 0n) throw new TallyError(ErrorCode.invalidArgument, `last_ms must be positive, got ${lastMs}`);
      // Beyond any retention: out of range without a float conversion surprise.
      const lastMsNumber = lastMs > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(lastMs);
      const read = await timedRead(`window_${consistency}`, () => deps.windows.read(name, lastMsNumber, consistency === 'CACHED'));
      return {
        counter: read.counter,
        total: read.total.toString(),
        exact: read.exact,
        fromUnixMs: String(read.fromMs),
        toUnixMs: String(read.toMs),
        bucketMs: String(read.bucketMs),
        buckets: read.buckets,
        asOfUnixMs: String(read.asOfMs),
        stalenessMs: String(read.stalenessMs),
      };
    }, changesNothing),
  };
  return { handlers, timedRead, readTotals, readPage };
}
