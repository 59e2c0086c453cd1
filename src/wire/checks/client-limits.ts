// The bounds the client library shares with the servers: int64, names, keys,
// batches, messages, and the client's own router and stream limits. The
// client package ships this file and never limits.ts, which re-exports it
// beside the servers' bounds.

export const INT64_MAX = 9223372036854775807n;

export const INT64_MIN = -9223372036854775808n;

/** Membership member ids are unsigned 64-bit. */
export const UINT64_MAX = 18446744073709551615n;

/** Counter names: 1..200 bytes of UTF-8, no control characters. */
export const counterNameBytesMax = 200;

/** Idempotency keys: 0..128 bytes; empty means "no key". */
export const idempotencyKeyBytesMax = 128;

/** Items in one IncrementBatch. */
export const batchItemsMax = 10_000;

/** Counters in one ReadMany. */
export const readManyCountersMax = 1_000;

/** Largest gRPC message any Tally server accepts or sends. */
export const messageBytesMax = 4 * 1024 * 1024;

/** Shards one counter may have. */
export const shardsPerCounterMax = 1_024;

/**
 * New counters one call may create. They are created in one directory
 * transaction (one fsync) that holds the router's event loop while it
 * runs: 1,000 one-shard counters take 6-65 ms on a loaded 2-core machine
 * (10,000: 130-240 ms; a transaction per counter would take 3 s for
 * 1,000). A batch that needs more splits into calls.
 */
export const newCountersPerCallMax = 1_000;

/**
 * Counters one ListCounters page may hold. A page is one range scan of the
 * directory's name index on the router's event loop: 1,001 rows take ~2 ms
 * wherever the page starts, at 50,000 or 1M counters; the answer stays
 * under ~220 KB at the longest names.
 */
export const listPageSizeMax = 1_000;

/**
 * IncrementBatch calls a coalescing client keeps in flight; later increments
 * queue and leave together. 2, as nodeCallsInFlightMax: one batch is decoded
 * and routed while the other waits for its fsyncs (64 callers: 4,900 and
 * 9,900/s against 3,000 and 6,900/s with 1, two noisy runs each).
 */
export const coalescedCallsInFlightMax = 2;

/** Increments a coalescing client holds queued before it refuses more (RESOURCE_EXHAUSTED, nothing sent). */
export const coalescedQueueItemsMax = 100_000;

/** Router addresses one client (createTallyClient addresses, the CLI's --router a,b) may be given. */
export const routerAddressesMax = 16;

/**
 * How long a client passes over a router after a call to it failed
 * UNAVAILABLE or DEADLINE_EXCEEDED, or found it unreachable: the first
 * failure, doubled per further one up to routerAvoidMsMax, and forgotten at
 * its next success. A call still goes to an avoided router when every other
 * one is avoided too.
 */
export const routerAvoidMsMin = 1_000;

export const routerAvoidMsMax = 5_000;

/**
 * How long a call waits for a connection to a router before moving on to the
 * next one, nothing sent (a router that drops SYNs never refuses). The last
 * router a call may try gets the rest of the call's deadline, as one address
 * always did.
 */
export const routerConnectWaitMsMax = 1_000;

/** Bytes of a node address in a request: a DNS name's 253, brackets, a colon and a 5-digit port. */
export const nodeAddressBytesMax = 261;

/**
 * Batches of one IncrementStream a router works on at once. A batch beyond
 * it is answered RESOURCE_EXHAUSTED (NOT_APPLIED, with a retry delay) by its
 * sequence number, read and dropped: what one stream makes the router hold
 * is this many batches, each at most incrementStreamMessageBytesMax. A
 * batch's slot frees once its answer is handed to HTTP/2, so a client that
 * stops reading answers stops being served. The TypeScript client keeps
 * within it: its further batches wait for a slot.
 */
export const streamBatchesInFlightMax = 8;

/**
 * How long a client keeps sending on one IncrementStream before it opens the
 * next (the old one finishes its batches and closes): well inside the
 * server's ceiling on any call (callDeadlineMaxMs), which would end it with
 * its batches in flight.
 */
export const incrementStreamLifetimeMs = 30_000;

/**
 * Pages of one ReadStream a router works on at once; a page beyond it is
 * answered RESOURCE_EXHAUSTED (NOT_APPLIED, with a retry delay) by its
 * sequence number. More than a stream's increment batches: a page is small
 * (readManyCountersMax names at most) and a feed keeps many in flight. The
 * TypeScript client keeps within it: its further pages wait for a slot.
 */
export const readStreamPagesInFlightMax = 32;

/** How long a client keeps sending on one ReadStream before it opens the next: as incrementStreamLifetimeMs, inside the server's ceiling on any call. */
export const readStreamLifetimeMs = 30_000;

/** Bytes of a region name (--region; the region of a ReadResponse's part): a metric label value and a log record field. */
export const regionNameBytesMax = 32;
