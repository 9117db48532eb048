import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits on what a page or the stack shows; vitest's default of 1 s fails on a loaded machine
    // (a first request bundles the console's script). It returns as soon as the expectation holds.
    expect: { poll: { timeout: 30_000, interval: 100 } },
    // Integration files wait mostly on I/O (emulators, receivers): one worker per core halves the suite's time.
    maxWorkers: 2,
  },
});
