// How fast a region stores a peer's components (the receiving side of a
// link catching up): one region (router + one node pair, region "us"), and
// this script as region "eu" streaming components of never-seen counters
// straight into its RegionLink/Exchange, batches of 512 with up to --in-flight
// unanswered, until every batch is answered (durable in us's node logs).
//   node --import tsx bench/throughput/region-receiver.mts [--components 50000] [--in-flight 8] [--runs 3]
// Run it on two checkouts in the same session and compare the medians.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { credentials } from '@grpc/grpc-js';
import { RegionLinkClient, type regionV1 } from '../../src/common/index.ts';
import { clientChannelOptions } from '../../src/wire/index.ts';
import { onePairCluster } from '../support/one-pair.mts';

function flag(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 ? Number(process.argv[index + 1]) : fallback;
}
const componentCount = flag('components', 50_000);
const inFlightMax = flag('in-flight', 8);
const runs = flag('runs', 3);
const batchMax = 512;

/** CPU seconds a process has used (user + system), from /proc. */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function stream(address: string, runId: number): Promise<number> {
  const client = new RegionLinkClient(address, credentials.createInsecure(), clientChannelOptions);
  const call = client.Exchange();
  const startedMs = performance.now();
  let nextIndex = 0;
  let seq = 0;
  let inFlight = 0;
  let answered = 0;
  const batchCount = Math.ceil(componentCount / batchMax);
  await new Promise<void>((resolve, reject) => {
    const send = (): void => {
      while (inFlight < inFlightMax && nextIndex < componentCount) {
        const components: regionV1.Component[] = [];
        for (let i = 0; i < batchMax && nextIndex < componentCount; i++, nextIndex++)
          components.push({
            counter: `recv:${runId}:${nextIndex}`,
            total: String(nextIndex + 1),
            version: { term: String(runId + 1), round: String(seq + 1) },
            asOfUnixMs: String(Date.now()),
            generation: '0',
          });
        seq++;
        inFlight++;
        call.write({ batch: { seq: String(seq), components, version: { term: String(runId + 1), round: String(seq) }, asOfUnixMs: '0' } });
      }
    };
    call.on('data', (answer: regionV1.RegionAnswer__Output) => {
      if (answer.seq === '0') {
        send();
        return;
      }
      inFlight--;
      answered++;
      if (answered === batchCount) resolve();
      else send();
    });
    call.on('error', reject);
    call.write({ hello: { originRegion: 'eu', targetRegion: 'us' } });
  });
  const elapsedMs = performance.now() - startedMs;
  call.end();
  client.close();
  return componentCount / (elapsedMs / 1_000);
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-region-receiver-'));
const cluster = await onePairCluster(dataDir, {
  routerArgs: ['--region', 'us', '--peer-regions', 'eu=127.0.0.1:9'],
  nodeArgs: ['--region', 'us'],
});
await cluster.start();
try {
  const rates: number[] = [];
  for (let run = 0; run < runs; run++) {
    const pids = [cluster.routers[0]!.process.pid, ...cluster.nodes.map((node) => node.process.pid)];
    const before = pids.map(cpuSeconds);
    const rate = await stream(cluster.routerAddress, run);
    const used = pids.map((pid, index) => (cpuSeconds(pid) - before[index]!).toFixed(2));
    rates.push(rate);
    console.log(
      `  run ${run + 1}: ${componentCount.toLocaleString('en-US')} components of new counters in ${(componentCount / rate).toFixed(1)} s = ${Math.round(rate).toLocaleString('en-US')}/s; CPU s router ${used[0]}, primary ${used[1]}, follower ${used[2]}`,
    );
  }
  console.log(
    `region receiver: ${inFlightMax} batches of ${batchMax} in flight, median ${Math.round(median(rates)).toLocaleString('en-US')} components/s`,
  );
} finally {
  await cluster.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
