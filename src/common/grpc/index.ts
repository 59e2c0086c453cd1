// gRPC servers and what guards them: binding a server with reflection and
// health, the per-call guards (deadlines, sizes, in-flight bounds), who a
// TLS peer is and what it may call, TLS credentials, and the protos loaded
// from proto/ with their service definitions.
export * from './server.ts';
export * from './call-guards.ts';
export * from './peer-role.ts';
export * from './tls.ts';
export * from './proto.ts';
