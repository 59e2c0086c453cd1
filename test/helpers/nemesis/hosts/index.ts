// Hosts: network namespaces on a private bridge, cuts between them, and a
// process run inside one. Knows nothing of Tally.
export { requireNemesisTools } from './preflight.ts';
export { Network, type Host, type CutMode } from './network.ts';
export { HostProcess, type HostProcessOptions } from './host-process.ts';
export { sweepLeftoverNamespaces } from './netns.ts';
