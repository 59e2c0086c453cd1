// Pair supervision: the one router elected to give nodes their roles, the
// decisions it makes per pair, and the duties that run only on it.
export { SupervisorDuties, type SupervisorDuty } from './duties.ts';
export { PairSupervisor } from './pair-supervisor.ts';
export { EtcdSupervisorElection, SoleSupervisor, requireSupervisor, type SupervisorElection } from './supervisor-election.ts';
