// npm run nemesis -- --minutes N [--seed S] [--out DIR] [--short-timeouts] [--from-repo]
// A soak of consecutive seeded nemesis schedules; prints where its report is.
// Leases and timeouts are the product's defaults unless --short-timeouts asks
// for the chaos suite's (2 s lease, 1.5 s failover), which find more per minute
// but do not describe what an operator runs.
// Needs root and the Debian packages iproute2, iptables, faketime and etcd-server.
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runSoak } from '../test/helpers/nemesis/soak.ts';
import { reportMarkdown } from '../test/helpers/nemesis/report.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' },
    seed: { type: 'string' },
    out: { type: 'string' },
    faults: { type: 'string', default: '5' },
    'short-timeouts': { type: 'boolean', default: false },
    'from-repo': { type: 'boolean', default: false },
  },
});
const minutes = Number(values.minutes);
if (!(minutes > 0)) throw new Error(`--minutes must be a positive number, got ${values.minutes}`);
const firstSeed = values.seed === undefined ? Math.floor(Math.random() * 1_000_000) : Number(values.seed);
const outDir = values.out ?? path.join(os.tmpdir(), `tally-nemesis-${new Date().toISOString().replace(/[:.]/g, '-')}`);
console.log(
  `nemesis soak: ${minutes} min from seed ${firstSeed}, ${values['short-timeouts'] ? "the chaos suite's short" : "the product's default"} timeouts; report in ${outDir}/report.md`,
);
const report = await runSoak({
  minutes,
  firstSeed,
  outDir,
  productDefaults: !values['short-timeouts'],
  fromRepo: values['from-repo'],
  shape: { faultCount: Number(values.faults), holdMs: [2_000, 6_000], gapMs: 3_000, leaseMs: values['short-timeouts'] ? 2_000 : 5_000 },
  log: (line) => console.log(line),
});
console.log(reportMarkdown(report));
console.log(`report: ${path.join(outDir, 'report.md')} (and report.json)`);
process.exit(report.violations.length === 0 ? 0 : 1);
