// What every process shares. Import from here, not from the files.
export * from './errors.ts';
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
export * from './server.ts';
export * from './client-channel.ts';
export * from './tls.ts';
export { isLoopbackHost } from './address.ts';
export * from './call-guards.ts';
export * from './peer-role.ts';
