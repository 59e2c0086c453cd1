// What every process shares. Import from here, not from the files.
export * from './errors.ts';
export {
  ErrorReason,
  ErrorMetadataKey,
  CapName,
  capRefusalDetails,
  errorDomain,
  statusDetailsKey,
  decodeStatusDetails,
  type StatusDetails,
} from './error-details.ts';
export * from './limits.ts';
export * from './validate.ts';
export * from './window-setting.ts';
export * from './interval-task.ts';
export * from './lru-map.ts';
export * from './fifo.ts';
export * from './private-files.ts';
export * from './config.ts';
export * from './logger.ts';
export * from './metrics.ts';
export * from './proto.ts';
export * from './counter-codec.ts';
export * from './server.ts';
export * from './client-channel.ts';
export * from './caller-stack.ts';
export * from './tls.ts';
export { isLoopbackHost } from './address.ts';
export * from './call-guards.ts';
export * from './peer-role.ts';
export * from './clock.ts';
export * from './shard-protocol.ts';
export * from './shard-frames.ts';
export * from './region-config.ts';
export * from './region-component.ts';
export * from './region-part-codec.ts';
export * from './shard-columns.ts';
