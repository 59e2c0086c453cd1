// Every command of the `tally` CLI, in the order `tally --help` lists them.
// A new command is one spec (command-spec.ts) added to this list: its flags,
// help and refusals come from that spec.
import type { CommandSpec } from '../command-spec.ts';
import { clusterCommands } from './cluster.ts';
import { counterCommands } from './counters.ts';
import { toolCommands } from './tools.ts';

export const commands: readonly CommandSpec[] = [...counterCommands, ...clusterCommands, ...toolCommands];
