// Histories and their judges: the record of every call, the checker of G1-G3
// over it, and the pairwise comparison of the nodes' logs.
export {
  History,
  machineMonotonicMs,
  describeOperation,
  operationToJson,
  operationFromJson,
  type Operation,
  type IncrementOperation,
  type ReadOperation,
  type Outcome,
} from './history.ts';
export { checkHistory, describeViolation, type Violation, type Rule } from './checker.ts';
export { compareLogs, type LogComparison } from './log-check.ts';
