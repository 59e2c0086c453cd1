// CPU one Tally process spends to start, from the compiled dist/ of one or
// more checkouts, alternating between them: a node or a router from spawn to
// its "ready" line. The test suite starts about a thousand such processes.
// (The CLI exits by itself: /usr/bin/time measures it.)
//   node --import tsx bench/cpu/process-start.mts node|router <runs> <checkout> [<checkout>...]
// Prints the median and every run's user+system CPU (from /proc) per checkout.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const [kind, runsText, ...checkouts] = process.argv.slice(2);
const runCount = Number(runsText);
if ((kind !== 'node' && kind !== 'router') || !Number.isInteger(runCount) || runCount < 1 || checkouts.length === 0) {
  process.stderr.write('usage: process-start.mts node|router <runs> <checkout> [<checkout>...]\n');
  process.exit(2);
}
const clockTicksPerSecond = 100;

/** User+system CPU of a live process, from /proc/<pid>/stat (fields 14 and 15). */
function cpuMsOf(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1_000) / clockTicksPerSecond;
}

function argsOf(checkout: string, dataDir: string): string[] {
  const listen = ['--listen', '127.0.0.1:0', '--data-dir', dataDir, '--metrics-port', '0'];
  if (kind === 'node') return [path.join(checkout, 'dist/node/main.js'), ...listen, '--node-name', 'n'];
  return [
    path.join(checkout, 'dist/router/main.js'),
    ...listen,
    '--insecure',
    '--allow-unauthenticated',
    '--pairs',
    '127.0.0.1:1,127.0.0.1:2',
  ];
}

async function startCpuMs(checkout: string): Promise<number> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'process-start-'));
  try {
    const child = spawn(process.execPath, ['--no-deprecation', ...argsOf(checkout, dataDir)], { stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const ready = await new Promise<boolean>((resolve) => {
      for (const stream of [child.stdout, child.stderr]) {
        readline.createInterface({ input: stream }).on('line', (line) => {
          if (line.includes('"msg":"ready"')) resolve(true);
        });
      }
      void exited.then(() => resolve(false));
    });
    if (!ready) throw new Error(`${kind} from ${checkout} exited before it was ready`);
    const cpuMs = cpuMsOf(child.pid!);
    child.kill('SIGKILL');
    await exited;
    return cpuMs;
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const runsOf = new Map<string, number[]>(checkouts.map((checkout) => [checkout, []]));
for (let run = 0; run < runCount; run++) {
  for (const checkout of checkouts) runsOf.get(checkout)!.push(await startCpuMs(checkout));
}
for (const [checkout, runs] of runsOf) {
  const sorted = [...runs].sort((a, b) => a - b);
  console.log(JSON.stringify({ kind, checkout, medianCpuMs: sorted[Math.floor(sorted.length / 2)], runsCpuMs: runs }));
}
