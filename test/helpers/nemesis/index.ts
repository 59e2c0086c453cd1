// The nemesis: Tally's processes as hosts in network namespaces, faults with
// heals, a history of every call and a checker that judges it, and seeded
// schedules that combine them. Tests and scripts/nemesis.ts import from here.
export { requireNemesisTools } from './preflight.ts';
export { Network, type Host, type CutMode } from './network.ts';
export { HostProcess } from './host-process.ts';
export {
  NemesisCluster,
  repoProgram,
  freshBuildProgram,
  type Program,
  type ClusterProcess,
  type NemesisClusterOptions,
} from './cluster.ts';
export { ClientHost, type RelayedStatus } from './client-host.ts';
export type { LoadOptions } from './client-protocol.ts';
export { applyFault, describeFault, faultKinds, pendingFaultKinds, type FaultSpec, type FaultKind, type ActiveFault } from './faults.ts';
export {
  History,
  machineMonotonicMs,
  describeOperation,
  type Operation,
  type IncrementOperation,
  type ReadOperation,
  type Outcome,
} from './history.ts';
export { checkHistory, describeViolation, type Violation, type Rule } from './checker.ts';
export { compareLogs, type LogComparison } from './log-check.ts';
export {
  drawSchedule,
  describeSchedule,
  drawableFaultKinds,
  runSchedule,
  healEverything,
  pairMembers,
  supervisorName,
  topologyOf,
  type Schedule,
  type ScheduleStep,
  type ScheduleShape,
  type ScheduleResult,
  type FaultRecord,
  type FaultChoice,
  type RunOptions,
} from './schedule.ts';
export { SoakTally, reportMarkdown, type SoakReport, type FaultKindStats } from './report.ts';
