import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration and chaos tests start real processes; bound them. Three
    // files at a time on these 2-core machines: most of a chaos test is
    // waiting out timeouts (two at a time used ~1.1 cores; three took the
    // suite from ~11.7 to ~5.6 minutes).
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 3,
    fileParallelism: true,
  },
});
