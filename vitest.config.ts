import { defineConfig } from 'vitest/config';

// Integration and chaos tests start real processes; bound them.
const timeouts = { testTimeout: 60_000, hookTimeout: 60_000 };

export default defineConfig({
  test: {
    // Three files at a time on these 2-core machines: most of a chaos test is
    // waiting out timeouts (two at a time used ~1.1 cores; three took the
    // suite from ~11.7 to ~5.6 minutes).
    pool: 'forks',
    maxWorkers: 3,
    fileParallelism: true,
    projects: [
      {
        // Unit tests share one module graph per worker (isolate: false): each
        // file evaluating the sources again was half of their CPU. They keep
        // no state in modules between files: spies and fake timers are
        // restored by the file that sets them.
        test: { name: 'unit', include: ['test/unit/**/*.test.ts'], isolate: false, ...timeouts },
      },
      {
        // Processes, environment and clocks: each file in a fresh worker.
        test: { name: 'processes', include: ['test/integration/**/*.test.ts', 'test/chaos/**/*.test.ts'], ...timeouts },
      },
    ],
  },
});
