import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each file launches its own Chromium; two cores do not take more than two at once.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
