import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration files wait mostly on I/O (emulators, receivers): one worker per core halves the suite's time.
    maxWorkers: 2,
  },
});
