// The nemesis: Tally's processes as hosts in network namespaces, faults with
// heals, a history of every call and a checker that judges it, and seeded
// schedules that combine them. Tests and scripts/nemesis.mts import from here.
export { requireNemesisTools, Network, HostProcess, type Host, type CutMode } from './hosts/index.ts';
export {
  NemesisCluster,
  repoProgram,
  freshBuildProgram,
  type Program,
  type ClusterProcess,
  type NemesisClusterOptions,
} from './cluster.ts';
export { ClientHost, type RelayedStatus, type LoadOptions, type GlobalRead } from './client/index.ts';
export { applyFault, describeFault, faultKinds, type FaultSpec, type FaultKind, type ActiveFault } from './faults.ts';
export {
  History,
  machineMonotonicMs,
  describeOperation,
  checkHistory,
  describeViolation,
  compareLogs,
  type Operation,
  type IncrementOperation,
  type ReadOperation,
  type Outcome,
  type Violation,
  type Rule,
  type LogComparison,
} from './check/index.ts';
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
export { runSoak, shortTimeouts, type SoakOptions } from './soak.ts';
