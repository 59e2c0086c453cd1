// Preloaded into a Tally process by benches that read its memory:
//   NODE_OPTIONS="--import ./bench/memory/memory-probe.mjs" TALLY_MEMORY_PROBE_FILE=file node …
// On SIGUSR2 it runs two full GCs and writes process.memoryUsage() and
// v8.getHeapStatistics() as one JSON object to the file; the process runs on.
// Plain JavaScript: NODE_OPTIONS imports run before tsx is registered.
import fs from 'node:fs';
import v8 from 'node:v8';
import vm from 'node:vm';

const probeFile = process.env.TALLY_MEMORY_PROBE_FILE;
if (probeFile !== undefined) {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  process.on('SIGUSR2', () => {
    gc();
    gc();
    fs.writeFileSync(probeFile, JSON.stringify({ ...process.memoryUsage(), heapStatistics: v8.getHeapStatistics() }));
  });
}
