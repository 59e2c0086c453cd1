// Preloaded into a Tally process by bench/cpu/router-allocations.mts:
//   NODE_OPTIONS="--import ./bench/cpu/heap-sampler.mjs" TALLY_HEAP_SAMPLE_FILE=file node …
// The first SIGUSR2 starts V8's sampling heap profiler counting every
// allocation, collected or not (a live-objects profile would miss the
// garbage an increment leaves); the next stops it and writes the profile
// (CDP SamplingHeapProfile) as JSON to the file. The process runs on.
// Plain JavaScript: NODE_OPTIONS imports run before tsx is registered.
import fs from 'node:fs';
import inspector from 'node:inspector';

const sampleFile = process.env.TALLY_HEAP_SAMPLE_FILE;
const samplingIntervalBytes = Number(process.env.TALLY_HEAP_SAMPLE_INTERVAL_BYTES ?? 4096);
if (sampleFile !== undefined) {
  const session = new inspector.Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  let sampling = false;
  process.on('SIGUSR2', () => {
    const step = sampling
      ? post('HeapProfiler.stopSampling').then(({ profile }) => {
          // Whole or not at all: the bench reads the file as soon as it appears.
          fs.writeFileSync(`${sampleFile}.tmp`, JSON.stringify({ samplingIntervalBytes, profile }));
          fs.renameSync(`${sampleFile}.tmp`, sampleFile);
        })
      : post('HeapProfiler.enable').then(() =>
          post('HeapProfiler.startSampling', {
            samplingInterval: samplingIntervalBytes,
            includeObjectsCollectedByMajorGC: true,
            includeObjectsCollectedByMinorGC: true,
          }),
        );
    sampling = !sampling;
    step.catch((error) => fs.writeFileSync(sampleFile, JSON.stringify({ error: String(error) })));
  });
}
