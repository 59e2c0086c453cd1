// One nemesis cluster shared by the tests of a file: started before them,
// replaced after a test that left it without full service (so one finding
// does not fail every test after it), and its logs compared pair by pair
// after the last. The nemesis files each hold part of the scenarios, so the
// suite runs them side by side.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { NemesisCluster, type NemesisClusterOptions } from './cluster.ts';
import { compareLogs, describeViolation } from './check/index.ts';
import { describeSchedule, runSchedule, type Schedule, type ScheduleResult, type ScheduleStep } from './schedule.ts';

export interface NemesisSuite {
  /** The cluster now (a new one after a broken test). */
  cluster(): NemesisCluster;
  /** Starts a fresh cluster if the last test left this one broken. */
  freshIfBroken(): Promise<void>;
  /** Marks the cluster broken until the test says otherwise (a test that drives faults itself). */
  setBroken(broken: boolean): void;
  run(schedule: Schedule): Promise<ScheduleResult>;
  expectSafe(result: ScheduleResult): void;
}

const runOptions = { warmupMs: 500, quietTimeoutMs: 20_000 };

/** Registers the shared cluster's hooks; call inside a describe, then register the tests, then call `compareLogsAfterwards`. */
export function nemesisSuite(options: NemesisClusterOptions, testFile: string): NemesisSuite & { compareLogsAfterwards(): void } {
  let cluster: NemesisCluster | undefined;
  let broken = false;
  /** Log comparisons of clusters replaced along the way. */
  const earlierLogViolations: string[] = [];

  beforeAll(async () => {
    cluster = await NemesisCluster.start(options);
  }, 90_000);
  afterAll(async () => {
    await cluster?.stop({ removeData: true });
  }, 30_000);

  const suite = {
    cluster: () => cluster!,
    setBroken(value: boolean) {
      broken = value;
    },
    async freshIfBroken() {
      if (!broken) return;
      await cluster!.stop();
      earlierLogViolations.push(...compareLogs(cluster!.logPairs()).violations.map(describeViolation));
      await cluster!.stop({ removeData: true });
      cluster = await NemesisCluster.start(options);
      broken = false;
    },
    async run(schedule: Schedule): Promise<ScheduleResult> {
      await suite.freshIfBroken();
      const result = await runSchedule(cluster!, schedule, runOptions);
      broken = result.missingService !== undefined;
      return result;
    },
    expectSafe(result: ScheduleResult): void {
      const problems = [
        ...result.violations.map(describeViolation),
        ...result.faults.filter((record) => record.error !== undefined).map((record) => `${record.description}: ${record.error}`),
      ];
      expect(
        problems,
        `${describeSchedule(result.schedule)}\nrerun: TALLY_NEMESIS_SEED=${result.schedule.seed} npx vitest run ${testFile}\n${problems.join('\n')}\nlast lines:\n${cluster!.logs.slice(-40).join('\n')}`,
      ).toEqual([]);
      expect(
        result.missingService,
        `full service after the heal (${result.schedule.name})\n${describeSchedule(result.schedule)}`,
      ).toBeUndefined();
    },
    compareLogsAfterwards(): void {
      it('afterwards no two nodes of a pair hold different entries at one log position in one epoch', async () => {
        await cluster!.stop();
        const comparison = compareLogs(cluster!.logPairs());
        expect([...earlierLogViolations, ...comparison.violations.map(describeViolation)]).toEqual([]);
        expect(comparison.comparedPositions).toBeGreaterThan(0);
      }, 30_000);
    },
  };
  return suite;
}

/** A targeted scenario: one step, its counters its own. */
export function scenario(name: string, seed: number, step: ScheduleStep): Schedule {
  const stem = name.replace(/\W+/g, '-');
  return { name, seed, counters: [`${stem}-0`, `${stem}-1`], steps: [step] };
}
