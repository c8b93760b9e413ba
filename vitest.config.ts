import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Generous on purpose: a test that launches a CLI process and its Chromium twice took over 60 s
    // with a second copy of the suite running beside it. A passing test is not slowed by this.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Each file launches its own Chromium; two cores do not take more than two at once.
    maxWorkers: 2,
    fileParallelism: true,
    // A contributor needs the failures and the totals, not 280 file lines: dots, then any failure in
    // full. Console output of passing tests is dropped; a failing test's is kept.
    reporters: ['dot'],
    silent: 'passed-only',
    // …which holds back console output only: in-process servers' log lines are sent there too.
    setupFiles: ['test/support/quiet-logs.ts'],
    env: {
      // The suite runs on Node 20 (README: 20.11+ works, 22 is declared); the SDK's notice about its
      // 2027 releases would print once per test file.
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
  },
});
