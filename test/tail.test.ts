import { createHash } from "node:crypto";
import { createRequire } from "node:module";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { bin, linkAgent, makeSandbox, standInManifest, type Sandbox } from "./helpers.js";

// The user's terminal as bytes: a real pseudo-terminal held by the test, its output kept whole rather than rendered.
const require = createRequire(import.meta.url);
const pty = require("node-pty") as typeof import("node-pty");

const TRIALS = 50;
// runs at once: the machine's cores share them, and each still waits for its own agent's exit
const AT_ONCE = 5;
const TAIL_KB = 512;

let sandbox: Sandbox;

beforeEach(() => {
  sandbox = makeSandbox();
  linkAgent(sandbox, "tail", "big-tail.mjs");
  sandbox.write("config/providers/tail.json", standInManifest("tail"));
  sandbox.write("config/config.json", { providers: ["tail"], auto_detect: false });
});
afterEach(() => sandbox.cleanup());

// What the agent writes: its numbered lines and closing line, as big-tail.mjs makes them.
function expected(): string {
  const lines = Math.ceil((TAIL_KB * 1024) / 64);
  let text = "";
  for (let i = 1; i <= lines; i++) text += `tail ${String(i).padStart(6, "0")} ${"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRST".slice(0, 52)}\n`;
  return `${text}tail end ${lines}\n`;
}

// One uuldana run in a terminal of its own: every byte it wrote there, once it has exited.
function runOnce(): Promise<{ exitCode: number; output: Buffer }> {
  return new Promise((resolve) => {
    const child = pty.spawn(process.execPath, [bin, "run", "--provider", "tail"], {
      name: "xterm-256color",
      cols: 100,
      rows: 30,
      cwd: sandbox.project,
      env: { ...sandbox.env, TAIL_KB: String(TAIL_KB), TERM: "xterm-256color" },
      encoding: null,
    } as unknown as import("node-pty").IPtyForkOptions);
    const chunks: Buffer[] = [];
    child.onData((data) => chunks.push(Buffer.from(data as unknown as Buffer)));
    child.onExit(({ exitCode }) => resolve({ exitCode, output: Buffer.concat(chunks) }));
  });
}

// The agent's lines among what reached the terminal (line ends as the terminals made them, uuldana's lines left out).
function agentText(output: Buffer): string {
  // the title and mode sequences uuldana writes around the agent's output
  const text = output.toString("utf8").replace(/\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-?]*[ -/]*[@-~]/g, "");
  const lines = text.replace(/\r/g, "").split("\n");
  return lines.filter((line) => /^tail (\d{6} |end )/.test(line)).map((line) => `${line}\n`).join("");
}

const sha = (text: string): string => createHash("sha256").update(text).digest("hex");

describe("an agent whose last write is large and whose exit follows at once", () => {
  it(`delivers every byte of it to the user, ${TRIALS} times in ${TRIALS}`, async () => {
    const want = expected();
    const outcomes: string[] = [];
    for (let round = 0; round < TRIALS / AT_ONCE; round++) {
      const runs = await Promise.all(Array.from({ length: AT_ONCE }, () => runOnce()));
      for (const { exitCode, output } of runs) {
        const got = agentText(output);
        outcomes.push(`exit ${exitCode}, ${got.length} of ${want.length} bytes, ${sha(got) === sha(want) ? "the same" : "not the same"}`);
      }
    }
    expect(outcomes).toEqual(Array.from({ length: TRIALS }, () => `exit 0, ${want.length} of ${want.length} bytes, the same`));
  }, 600_000);
});

describe("an agent that says one line and exits at once, uuldana writing to a pipe", () => {
  it("delivers its line and its exit status every time (40 runs, 4 at once)", async () => {
    linkAgent(sandbox, "ver", "version-agent.sh");
    sandbox.write("config/providers/ver.json", standInManifest("ver", { version: { args: ["--version"], pattern: "^ver (\\S+)" } }));
    sandbox.write("config/config.json", { providers: ["ver"], auto_detect: false });
    const outcomes: string[] = [];
    for (let round = 0; round < 10; round++) {
      const runs = await Promise.all(Array.from({ length: 4 }, () => sandbox.run(["run"])));
      for (const run of runs) outcomes.push(`exit ${run.code}: ${JSON.stringify(run.stdout)}`);
    }
    expect(outcomes).toEqual(Array.from({ length: 40 }, () => `exit 0: ${JSON.stringify("ver: started with --ask\r\n")}`));
  }, 300_000);
});
