// What a client and a server both check before a value goes on the wire:
// the bounds a client enforces (client-limits.ts; the servers' own bounds are
// in src/common/limits.ts), request validation, host:port parsing and the
// window setting's shape.
export * from './client-limits.ts';
export * from './validate.ts';
export * from './address.ts';
export * from './window-setting.ts';
