import { readFileSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

import { describe, expect, it } from "vitest";

import { spawnAgent } from "../core/terminal/pty.js";
import { root } from "./helpers.js";

// What uuldana takes from node-pty beyond its public interface (core/terminal/pty-internals.ts): these fail, rather
// than a user's run, when an upgrade of node-pty changes it.
const require = createRequire(import.meta.url);

function spawnOwn(script: string) {
  return spawnAgent({ file: process.execPath, args: ["-e", script], env: { PATH: process.env.PATH ?? "" }, cwd: root, cols: 80, rows: 24, term: "xterm-256color", ownReading: true });
}

// Reads the terminal until it has nothing more to give once the agent is gone (it is non-blocking: EAGAIN while empty).
async function readAll(fd: number, gone: () => boolean): Promise<string> {
  const buffer = Buffer.alloc(65536);
  let text = "";
  for (;;) {
    try {
      const count = readSync(fd, buffer, 0, buffer.length, null);
      if (count === 0) return text;
      text += buffer.toString("utf8", 0, count);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EIO") return text;
      if (code !== "EAGAIN") throw error;
      if (gone()) return text;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }
}

describe.skipIf(process.platform === "win32")("node-pty's internals", () => {
  it("is the exact version package.json pins", () => {
    const pinned = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).dependencies["node-pty"];
    const installed = require("node-pty/package.json").version;
    expect(pinned).toBe(installed);
  });

  it("lets uuldana read the agent's terminal itself, every byte, with node-pty's own reading kept off", async () => {
    const agent = spawnOwn('process.stdout.write("x".repeat(200000) + "END\\n"); process.exitCode = 3');
    expect(agent.own).toBeDefined();
    const own = agent.own!;
    let eventBytes = 0;
    agent.onData((data) => (eventBytes += data.length));
    let processGone = false;
    void own.processGone.then(() => (processGone = true));
    const text = await readAll(own.fd, () => processGone);
    // node-pty saw the agent's process exit before its terminal was closed
    expect(processGone).toBe(true);
    own.end();
    expect(await agent.exited).toEqual({ exitCode: 3, signal: undefined });
    expect(text.replace(/\r/g, "")).toBe(`${"x".repeat(200000)}END\n`);
    expect(eventBytes).toBe(0);
  });

  it("keeps the terminal open for a reader that starts late, past node-pty's own wait after the exit", async () => {
    const agent = spawnOwn('process.stdout.write("y".repeat(3000) + "LAST\\n")');
    const own = agent.own!;
    let exited = false;
    void agent.exited.then(() => (exited = true));
    await own.processGone;
    // node-pty closes its socket 200 ms after the exit unless uuldana's reading has ended
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(exited).toBe(false);
    const text = await readAll(own.fd, () => true);
    own.end();
    expect((await agent.exited).exitCode).toBe(0);
    expect(text.replace(/\r/g, "")).toBe(`${"y".repeat(3000)}LAST\n`);
  });

  it("writes to the agent through the terminal uuldana reads", async () => {
    const agent = spawnOwn('process.stdin.setRawMode(true); process.stdin.once("data", (d) => { process.stdout.write("got " + d); process.exit(0); })');
    const own = agent.own!;
    let processGone = false;
    void own.processGone.then(() => (processGone = true));
    setTimeout(() => agent.write("ping"), 300);
    const text = await readAll(own.fd, () => processGone);
    own.end();
    expect((await agent.exited).exitCode).toBe(0);
    expect(text).toContain("got ping");
  });
});
