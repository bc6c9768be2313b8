import { spawn, spawnSync } from "node:child_process";
import { closeSync, openSync } from "node:fs";

import { afterAll, describe, expect, it } from "vitest";

import { bin, makeSandbox } from "./helpers.js";

const sandbox = makeSandbox();
afterAll(() => sandbox.cleanup());

// `uuldana explain --jsonl < big | head -1`: the reader of the output leaves after one line.
function readFirstLine(args: string[], input: string): Promise<{ first: string; code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: sandbox.project, env: sandbox.env, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      if (out.includes("\n")) child.stdout.destroy();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ first: out.split("\n")[0]!, code, stderr }));
    // a command that ends before reading all its input closes the pipe: its exit code and its output say how it went
    child.stdin.on("error", (error: NodeJS.ErrnoException) => error.code === "EPIPE" || reject(error));
    child.stdin.end(input);
  });
}

describe("output to a pipe that closes early", () => {
  it("ends quietly with the command's own exit code, no stack trace", async () => {
    // about 630 KB of verdicts, ten times what a pipe holds (20,000 lines took more than the test's 30 s of a loaded
    // machine's CPU, and showed nothing more)
    const input = `${JSON.stringify("You've hit your usage limit · resets 5pm (UTC)")}\n`.repeat(2000);
    const run = await readFirstLine(["explain", "--jsonl", "--now", "2026-12-01T12:00:00Z"], input);
    expect(JSON.parse(run.first)).toMatchObject({ stop: true, reset_at: "2026-12-01T17:01:00.000Z" });
    expect(run).toMatchObject({ code: 0, stderr: "" });
  });
});

describe("output that cannot be written", () => {
  it("exits 1 when the disk is full: the output was lost", () => {
    const full = openSync("/dev/full", "w");
    try {
      const run = spawnSync(process.execPath, [bin, "providers", "list", "--json"], { cwd: sandbox.project, env: sandbox.env, stdio: ["ignore", full, "pipe"] });
      expect(run.status).toBe(1);
    } finally {
      closeSync(full);
    }
  });
});
