// What travels between Tally's processes and what a client and a server must
// agree on: errors and their reasons, the bounds a client enforces and the
// checks on a request, the clocks and channel options of a call, and the lean
// codecs of counter.v1. The one import of the client library; servers import
// it too, beside src/common/index.ts (their plumbing) and
// src/wire/internal/index.ts (the formats between servers).
export * from './errors/index.ts';
export * from './checks/index.ts';
export * from './calls/index.ts';
export * from './codecs/index.ts';
