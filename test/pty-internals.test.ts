import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Worker } from "node:worker_threads";

import { describe, expect, it } from "vitest";

import { spawnAgent } from "../core/terminal/pty.js";
import { root } from "./helpers.js";

// What uuldana takes from node-pty beyond its public interface (core/terminal/pty-internals.ts): these fail, rather
// than a user's run, when an upgrade of node-pty changes it.
const require = createRequire(import.meta.url);

function spawnOwn(script: string) {
  return spawnAgent({ file: process.execPath, args: ["-e", script], env: { PATH: process.env.PATH ?? "" }, cwd: root, cols: 80, rows: 24, term: "xterm-256color", ownReading: true });
}

// Reads the terminal in a thread of its own, as uuldana's output thread does (a read of it waits for the agent), until
// the terminal's end or a NUL (a knock); the text read.
function readInThread(fd: number): Promise<string> {
  const code = `
    const { readSync } = require("node:fs");
    const { parentPort, workerData } = require("node:worker_threads");
    const buffer = Buffer.alloc(65536);
    let text = "";
    for (;;) {
      let count = 0;
      try { count = readSync(workerData, buffer, 0, buffer.length, null); } catch (error) { if (error.code === "EIO") break; throw error; }
      if (count === 0) break;
      text += buffer.toString("latin1", 0, count);
      if (text.endsWith("\\0")) break;
    }
    parentPort.postMessage(text);`;
  const worker = new Worker(code, { eval: true, workerData: fd });
  return new Promise((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
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
    const text = await readInThread(own.fd);
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
    const text = await readInThread(own.fd);
    own.end();
    expect((await agent.exited).exitCode).toBe(0);
    expect(text.replace(/\r/g, "")).toBe(`${"y".repeat(3000)}LAST\n`);
  });

  it("writes to the agent through the terminal uuldana reads", async () => {
    const agent = spawnOwn('process.stdin.setRawMode(true); process.stdin.once("data", (d) => { process.stdout.write("got " + d); process.exit(0); })');
    const own = agent.own!;
    setTimeout(() => agent.write("ping"), 300);
    const text = await readInThread(own.fd);
    own.end();
    expect((await agent.exited).exitCode).toBe(0);
    expect(text).toContain("got ping");
  });

  it("makes a read of the terminal wait for the agent, and a knock wakes it", async () => {
    const agent = spawnOwn('process.stdout.write("ready"); setTimeout(() => {}, 30000)');
    const own = agent.own!;
    const read = readInThread(own.fd);
    let woken = false;
    void read.then(() => (woken = true));
    await new Promise((resolve) => setTimeout(resolve, 400));
    // the agent wrote "ready" and then nothing: the thread still waits in its read
    expect(woken).toBe(false);
    expect(own.knock()).toBe(true);
    expect(await read).toBe("ready\0");
    agent.signal("SIGKILL");
    own.end();
    expect((await agent.exited).signal).toBe(9);
  });

  it("says a knock did not pass while the agent's output is stopped (^S), and passes it once started (^Q)", async () => {
    const agent = spawnOwn('process.stdout.write("ready"); setTimeout(() => {}, 30000)');
    const own = agent.own!;
    const read = readInThread(own.fd);
    await new Promise((resolve) => setTimeout(resolve, 400));
    agent.write("\x13");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(own.knock()).toBe(false);
    agent.write("\x11");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(own.knock()).toBe(true);
    expect(await read).toBe("ready\0");
    agent.signal("SIGKILL");
    own.end();
    await agent.exited;
  });
});
