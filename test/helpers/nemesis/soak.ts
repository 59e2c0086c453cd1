// The soak behind `npm run nemesis`: consecutive seeded schedules, each on a
// fresh namespaced cluster (so each pair's logs are compared per schedule), a
// report rewritten after every schedule so a stopped soak still has one.
// It reports; it never retries a schedule that found something.
import fs from 'node:fs';
import path from 'node:path';
import { NemesisCluster, freshBuildProgram, repoProgram } from './cluster.ts';
import { describeSchedule, drawSchedule, runSchedule, topologyOf, type ScheduleShape } from './schedule.ts';
import { compareLogs, machineMonotonicMs, operationToJson } from './check/index.ts';
import { requireNemesisTools } from './hosts/index.ts';
import { SoakTally, reportMarkdown, type SoakReport } from './report.ts';

export interface SoakOptions {
  minutes: number;
  firstSeed: number;
  /** Directory for the report (report.md, report.json) and the histories of schedules that found violations. */
  outDir: string;
  /** Product defaults for leases and timeouts instead of the short ones the chaos suite uses. */
  productDefaults: boolean;
  /** Run the repository's programs as they are (dist/ or src/) instead of a fresh build taken at the start. */
  fromRepo: boolean;
  shape: ScheduleShape;
  log: (line: string) => void;
}

/** The chaos suite's short leases and timeouts (test/chaos/nemesis.test.ts uses the same). */
export const shortTimeouts = {
  leaseMs: 2_000,
  routerArgs: [
    '--router-lease-ttl-ms',
    '2000',
    '--failover-timeout-ms',
    '1500',
    '--follower-timeout-ms',
    '800',
    '--catch-up-timeout-ms',
    '1500',
    '--health-interval-ms',
    '100',
    '--health-timeout-ms',
    '300',
    '--node-call-timeout-ms',
    '1000',
    '--read-timeout-ms',
    '500',
  ],
  nodeArgs: ['--replication-timeout-ms', '500'],
};

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  requireNemesisTools();
  fs.mkdirSync(options.outDir, { recursive: true });
  const program = options.fromRepo ? repoProgram() : await freshBuildProgram();
  const tally = new SoakTally();
  const deadlineMs = machineMonotonicMs() + options.minutes * 60_000;
  const writeReport = (): SoakReport => {
    const report = tally.finish();
    fs.writeFileSync(path.join(options.outDir, 'report.md'), reportMarkdown(report));
    fs.writeFileSync(path.join(options.outDir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
    return report;
  };
  try {
    for (let seed = options.firstSeed; machineMonotonicMs() < deadlineMs; seed++) {
      let cluster: NemesisCluster | undefined;
      try {
        cluster = await NemesisCluster.start({
          program,
          ...(options.productDefaults ? {} : { routerArgs: shortTimeouts.routerArgs, nodeArgs: shortTimeouts.nodeArgs }),
        });
        const schedule = drawSchedule(seed, topologyOf(cluster), options.shape);
        options.log(describeSchedule(schedule));
        const result = await runSchedule(cluster, schedule, { log: (line) => options.log(`  ${line}`) });
        await cluster.stop();
        const logs = compareLogs(cluster.logPairs());
        tally.add(result, logs);
        const violations = [...result.violations, ...logs.violations];
        options.log(
          `  seed ${seed}: ${result.operations.length} operations, ${violations.length} violations, full service ${result.recoveredAfterMs === undefined ? `never (${result.missingService})` : `${Math.round(result.recoveredAfterMs)} ms`} after the last heal`,
        );
        if (violations.length > 0 || result.recoveredAfterMs === undefined) {
          // Keep the evidence: the history, the processes' last lines, and the data directories.
          const base = path.join(options.outDir, `seed-${seed}`);
          fs.writeFileSync(`${base}-history.jsonl`, `${result.operations.map(operationToJson).join('\n')}\n`);
          fs.writeFileSync(`${base}-logs.txt`, `${cluster.logs.join('\n')}\n`);
          options.log(`  kept: history in ${base}-history.jsonl, process lines in ${base}-logs.txt, data in ${cluster.dataDir}`);
        } else {
          await cluster.stop({ removeData: true });
        }
      } catch (error) {
        tally.addRunError(`seed ${seed}: ${(error as Error).message.split('\n')[0]}`);
        options.log(`  seed ${seed} stopped: ${(error as Error).message}`);
        await cluster?.stop({ removeData: true });
      }
      writeReport();
    }
  } finally {
    program.remove?.();
  }
  return writeReport();
}
