import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    pool: "forks",
    // most tests wait on stand-in agents in real pseudo-terminals, not on the CPU: four files at a time take a third
    // of the time one at a time does, on two cores too
    maxWorkers: 4,
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/build.ts"],
    // a test that starts uuldana a few times can take more than 30 s on a loaded two-core machine
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
