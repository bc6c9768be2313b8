import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { startRun, type HostOptions, type Run } from "../core/host/host.js";
import { EXIT } from "./agents.js";
import { bin, fixtures, linkAgent, makeSandbox, sessionJournals, standInManifest, waitFor, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

let sandbox: Sandbox;
let log: string;
const runs: Run[] = [];
const terminals: TestTerminal[] = [];

beforeEach(() => {
  sandbox = makeSandbox();
  log = join(sandbox.dir, "keys.log");
});
afterEach(async () => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  for (const run of runs.splice(0)) {
    run.agent.signal("SIGKILL");
    await run.result;
  }
  sandbox.cleanup();
});

// What the stand-in has read so far, byte for byte.
function received(): string {
  return existsSync(log) ? readFileSync(log, "latin1") : "";
}

// Runs the stand-in that logs what it reads through the host, with plain streams for stdin and stdout.
function start(env: Record<string, string> = {}, options: Partial<HostOptions> = {}): { run: Run; input: PassThrough; shown: () => string } {
  const input = new PassThrough();
  let written = "";
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written += chunk.toString("utf8");
      done();
    },
  });
  const run = startRun({
    file: join(fixtures, "agents", "input-log-agent.mjs"),
    args: [],
    env: { ...sandbox.env, KEYS_LOG: log, ...env },
    cwd: sandbox.project,
    entry: "inputlog",
    level: "ask",
    exit: EXIT,
    commandKey: "ctrl-]",
    stdin: input as unknown as NodeJS.ReadStream,
    stdout: output as unknown as NodeJS.WriteStream,
    ...options,
  });
  runs.push(run);
  return { run, input, shown: () => written };
}

// Writes each read in turn, the next once the stand-in has read the last.
async function play(input: PassThrough, reads: readonly string[]): Promise<void> {
  for (const read of reads) {
    const before = received();
    input.write(read);
    await waitFor(() => received() === before + read, `the stand-in to read ${JSON.stringify(read)}`);
  }
}

const DCS_VERSION = "\x1bP>|tmux 3.3a\x1b\\";
const OSC_BACKGROUND = "\x1b]11;rgb:1e1e/1e1e/1e1e\x1b\\";
const CURSOR_REPORT = "\x1b[12;5R";
const ATTRIBUTES = "\x1b[?64;1;2;6;22c";

describe("the terminal's replies in a run", () => {
  it("reach the agent byte for byte and are never the user's turns or keys", async () => {
    let keys = 0;
    const { run, input, shown } = start({}, { onKey: () => keys++ });
    await waitFor(() => shown().includes("input log agent ready"), "the stand-in to be ready");
    const reads = ["hel", DCS_VERSION, "lo", OSC_BACKGROUND, CURSOR_REPORT, "\r", ATTRIBUTES, "\x1b[I", "3\r", "/exit\r"];
    await play(input, reads);
    const result = await run.result;
    expect(received()).toBe(reads.join(""));
    expect(result.userTurns).toEqual(["hello", "3", "/exit"]);
    expect(keys).toBe(5);
  });

  it("are no typing when nothing else came", async () => {
    let keys = 0;
    const { run, input, shown } = start({}, { onKey: () => keys++ });
    await waitFor(() => shown().includes("input log agent ready"), "the stand-in to be ready");
    await play(input, [DCS_VERSION, OSC_BACKGROUND, CURSOR_REPORT, "\x1b[O"]);
    expect((await run.stop()).step).toBe("keys");
    const result = await run.result;
    expect({ typed: result.typed, userTurns: result.userTurns, keys }).toEqual({ typed: false, userTurns: [], keys: 0 });
  });
});

describe("keys typed while uuldana stops the agent", () => {
  it("are held back from it and handed out with the run's result", async () => {
    const { run, input, shown } = start({ LEAVE_MS: "500" });
    await waitFor(() => shown().includes("input log agent ready"), "the stand-in to be ready");
    await play(input, ["before\r"]);
    const stopping = run.stop();
    input.write("next question\r");
    await waitFor(() => received().endsWith("/exit\r"), "the stand-in to read its exit keys");
    input.write("half");
    // a reply of the terminal's still reaches the agent
    input.write(CURSOR_REPORT);
    await waitFor(() => received().endsWith(CURSOR_REPORT), "the stand-in to read the reply");
    expect((await stopping).step).toBe("keys");
    const result = await run.result;
    expect(received()).toBe(`before\r/exit\r${CURSOR_REPORT}`);
    expect({ userTurns: result.userTurns, heldTurns: result.heldTurns, heldPartial: result.heldPartial }).toEqual({
      userTurns: ["before"],
      heldTurns: ["next question"],
      heldPartial: "half",
    });
  });

  it("are none when nothing was typed", async () => {
    const { run, shown } = start();
    await waitFor(() => shown().includes("input log agent ready"), "the stand-in to be ready");
    await run.stop();
    const result = await run.result;
    expect({ heldTurns: result.heldTurns, heldPartial: result.heldPartial }).toEqual({ heldTurns: [], heldPartial: "" });
  });
});

describe("uuldana run with an agent that queries the terminal", () => {
  it("journals only what the user typed, and the agent gets the terminal's replies byte for byte", async () => {
    linkAgent(sandbox, "inputlog", "input-log-agent.mjs");
    sandbox.write("config/providers/inputlog.json", standInManifest("inputlog", { exit: EXIT }));
    sandbox.write("config/config.json", { providers: ["inputlog"], auto_detect: false });
    const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, KEYS_LOG: log, ASK_TERMINAL: "1" } });
    terminals.push(terminal);
    // everything the user's terminal sends, in order: its own answers (device attributes, the cursor position) and
    // what the test types and answers for it
    const sent: string[] = [];
    terminal.term.onData((reply) => sent.push(reply));
    const send = async (data: string): Promise<void> => {
      sent.push(data);
      terminal.type(data);
      await waitFor(() => received() === sent.join(""), `the agent to read ${JSON.stringify(data)}`);
    };
    await terminal.waitFor("input log agent ready");
    // the headless terminal answers the attributes and the cursor position itself; the version and the colour are
    // answered here, as tmux and a terminal that knows its colours would
    await waitFor(() => /\x1b\[\?1;2c.*\x1b\[\d+;\d+R/.test(received()), "the terminal's own answers to reach the agent");
    for (const data of ["hel", DCS_VERSION, "lo", OSC_BACKGROUND, "\r", "/exit\r"]) await send(data);
    expect((await terminal.exited).exitCode).toBe(0);
    expect(received()).toBe(sent.join(""));
    const [journal] = sessionJournals(sandbox.data);
    expect(journal!.filter((event) => event.type === "user").map((event) => event.text)).toEqual(["hello", "/exit"]);
  });
});
