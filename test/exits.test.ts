import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { bin, fixtures, isAlive, linkAgent, makeSandbox, standInManifest, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];

beforeEach(() => {
  sandbox = makeSandbox();
  linkAgent(sandbox, "leaving", "leaving-screen.mjs");
  sandbox.write("config/providers/leaving.json", standInManifest("leaving", { exit: { keys: [], signals: ["SIGHUP", "SIGTERM"], signal_wait_seconds: 1 } }));
  sandbox.write("config/config.json", { providers: ["leaving"], auto_detect: false });
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  // an agent a failed test left without its uuldana
  if (existsSync(join(sandbox.dir, "pids"))) for (const pid of agentPids()) if (isAlive(pid)) process.kill(pid, "SIGKILL");
  sandbox.cleanup();
});

function agentPids(): number[] {
  return readFileSync(join(sandbox.dir, "pids"), "utf8").trim().split("\n").map((line) => Number(line.split(" ")[1]));
}

// uuldana run in a shell that prints the terminal settings before it starts and after it ends.
function openRun(env: Record<string, string>): TestTerminal {
  const script = `stty -g; "${process.execPath}" "${bin}" run; code=$?; echo "settings after: $(stty -g)"; exit $code`;
  const terminal = new TestTerminal("/bin/sh", ["-c", script], { cwd: sandbox.project, env: { ...sandbox.env, ...env }, cols: 160 });
  terminals.push(terminal);
  return terminal;
}

function journal(): { type: string; [field: string]: unknown }[] {
  const [id] = readdirSync(join(sandbox.data, "sessions"));
  return readFileSync(join(sandbox.data, "sessions", id!, "journal.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
}

describe("the command prompt open when the run ends", () => {
  it.each([
    ["the full-screen agent exits by itself", (_: TestTerminal, leave: string) => writeFileSync(leave, ""), 5, /^uuldana: leaving \(Stand-in leaving\) exited with code 5 after \d+s$/],
    [
      "uuldana gets SIGTERM",
      (terminal: TestTerminal) => process.kill(Number(spawnSync("pgrep", ["-P", String(terminal.child.pid)], { encoding: "utf8" }).stdout.trim()), "SIGTERM"),
      143,
      /^uuldana: stopped leaving \(Stand-in leaving\) with SIGHUP after \d+s$/,
    ],
  ])("closes the prompt and gives the terminal back whole when %s", async (_, end, code, last) => {
    const leave = join(sandbox.dir, "leave");
    const terminal = openRun({ LEAVE_FILE: leave });
    await terminal.waitFor("LEAVING AGENT ready");
    const before = /^[0-9a-f:]+/.exec(terminal.raw)![0];
    expect(terminal.term.buffer.active.type).toBe("alternate");
    expect(terminal.term.modes.mouseTrackingMode).toBe("vt200");
    terminal.type("\x1d");
    await terminal.waitFor("uuldana>");
    const shown = terminal.raw.length;
    end(terminal, leave);
    const exit = await Promise.race([terminal.exited, new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), 10_000))]);
    expect(exit).toEqual({ exitCode: code, signal: 0 });
    await terminal.settle();
    const after = terminal.raw.slice(shown);
    expect(after).not.toContain("internal error");
    expect(terminal.term.buffer.active.type).toBe("normal");
    expect(terminal.term.modes.mouseTrackingMode).toBe("none");
    // the cursor is shown again and the user's title taken back from the title stack
    expect(after.lastIndexOf("\x1b[?25h")).toBeGreaterThan(after.lastIndexOf("\x1b[?25l"));
    expect(after).toContain("\x1b[23;0t");
    const screen = terminal.screen();
    expect(screen.at(-2)).toMatch(last);
    expect(screen.at(-1)).toBe(`settings after: ${before}`);
    expect(journal().at(-1)).toMatchObject({ type: "session-end", exit_code: code });
  });
});

describe("uuldana crashing while an agent runs", () => {
  it.each([
    ["proof", "SIGTERM", "hangup-proof.mjs"],
    ["term", "SIGKILL", "stubborn-term.mjs"],
  ])("leaves no agent behind: the %s agent, which ignores SIGHUP, is stopped with %s", async (id, step, script) => {
    linkAgent(sandbox, id, script);
    sandbox.write(`config/providers/${id}.json`, standInManifest(id));
    sandbox.write("config/config.json", { providers: [id], auto_detect: false });
    const pids = join(sandbox.dir, "pids");
    const terminal = openRun({ PID_FILE: pids, NODE_OPTIONS: `--import ${join(fixtures, "crash-uuldana.mjs")}` });
    await terminal.waitFor(" ready");
    const before = /^[0-9a-f:]+/.exec(terminal.raw)![0];
    const [agent] = agentPids();
    expect(isAlive(agent!)).toBe(true);
    expect((await terminal.exited).exitCode).toBe(70);
    expect(isAlive(agent!)).toBe(false);
    const screen = await terminal.waitFor("settings after: ");
    expect(screen.slice(-3)).toEqual([
      "uuldana: internal error: a test made uuldana crash",
      "hint: this is a bug in uuldana; please report it with the command you ran",
      `settings after: ${before}`,
    ]);
    expect(journal().at(-1)).toMatchObject({ type: "session-end", exit_code: 70, reason: `uuldana crashed: a test made uuldana crash; its agent was stopped with ${step}` });
  });
});
