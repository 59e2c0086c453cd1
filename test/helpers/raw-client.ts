// An untyped gRPC client, for tests that send what the typed clients refuse to
// build (malformed messages, calls a certificate must not be allowed to make).
import type { Client } from '@grpc/grpc-js';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- any method name, any request shape: that is the point
export type RawRpcClient = Client & Record<string, Function>;
