// Starting a gRPC call without the caller stack grpc-js captures for it. It
// changes nothing of the call itself; it must not be held across an await
// (the limit is global, restored before start returns or throws).

/**
 * Runs start (one grpc-js call's start) with Error.stackTraceLimit at 0, so
 * the `new Error()` grpc-js's Client.makeUnaryRequest makes for every call,
 * read only to append "for call at" frames to a failed call's ServiceError,
 * walks no stack. Our callers never show that error's stack: they turn it
 * into a TallyError by its code and details (fromServiceError,
 * nodeCallError). The capture was 7% of the load generator's busy samples
 * per unary Increment and 2% of the router's (bench/RESULTS.md, "Unary near
 * the floor"); an error made after start returns has its frames as usual.
 */
export function withoutCallerStack<T>(start: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return start();
  } finally {
    Error.stackTraceLimit = limit;
  }
}
