// A shard node that reports its memory on SIGUSR2, for bench/node-memory.mts:
//   node --import tsx bench/node-memory-probe.mts <node flags>   (TALLY_MEMORY_PROBE_FILE=file)
// On SIGUSR2 it runs two full GCs and writes process.memoryUsage() and
// v8.getHeapStatistics() as one JSON object to the file; the node runs on.
import fs from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';

const probeFile = process.env.TALLY_MEMORY_PROBE_FILE;
if (probeFile === undefined) throw new Error('set TALLY_MEMORY_PROBE_FILE');
// ManagedProcess starts children with `--import tsx` only: expose gc from here.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
process.on('SIGUSR2', () => {
  gc();
  gc();
  const heap = v8.getHeapStatistics();
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((space) => [space.space_name, space.space_used_size]));
  fs.writeFileSync(probeFile, JSON.stringify({ ...process.memoryUsage(), heapStatistics: heap, spaces }));
});
await import('../src/node/main.ts');
