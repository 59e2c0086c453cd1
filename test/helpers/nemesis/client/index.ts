// The client host: an agent inside the client's namespace that makes every
// call of the load, and the harness's end of it.
export { ClientHost, type RelayedStatus, type GlobalRead } from './client-host.ts';
export type { AgentCommand, LoadOptions } from './protocol.ts';
