// The proto-loader options every loader of Tally's protos uses, the servers
// (src/common/grpc/proto.ts, from proto/ on disk) and the client (compiled-in
// descriptor) alike: the generated types assume them, and
// scripts/gen-proto-types.sh gives the type generator the same (change both
// together). int64 as a decimal string, so no amount passes through a float.
// No include directories: a loader that reads files adds its own.
import type { Options } from '@grpc/proto-loader';

export const protoLoaderOptions: Readonly<Options> = Object.freeze({
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
