import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    pool: "forks",
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/build.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
