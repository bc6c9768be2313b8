import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { bin, fixtures, isAlive, linkAgent, makeSandbox, standInManifest, waitFor, type Sandbox } from "./helpers.js";
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
    [
      "uuldana gets SIGHUP",
      (terminal: TestTerminal) => process.kill(Number(spawnSync("pgrep", ["-P", String(terminal.child.pid)], { encoding: "utf8" }).stdout.trim()), "SIGHUP"),
      129,
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

describe("an agent that leaves a process of its own holding the terminal", () => {
  it("ends the run at the agent's exit, with its last words shown, while the process still runs", async () => {
    linkAgent(sandbox, "helper", "leaves-helper.mjs");
    sandbox.write("config/providers/helper.json", standInManifest("helper"));
    sandbox.write("config/config.json", { providers: ["helper"], auto_detect: false });
    const terminal = openRun({ PID_FILE: join(sandbox.dir, "pids") });
    const exit = await Promise.race([terminal.exited, new Promise<"hung">((resolve) => setTimeout(() => resolve("hung"), 10_000))]);
    expect(exit).toEqual({ exitCode: 0, signal: 0 });
    const [helper] = agentPids();
    expect(isAlive(helper!)).toBe(true);
    const screen = await terminal.waitFor("settings after: ");
    expect(screen.slice(-3, -1)).toEqual(["LAST WORDS: the helper keeps the terminal", expect.stringMatching(/^uuldana: helper \(Stand-in helper\) exited with code 0 after \d+s$/)]);
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
      "uuldana: internal error: a test made uuldana crash [E_INTERNAL]",
      "hint: this is a bug in uuldana; please report it with the command you ran",
      `settings after: ${before}`,
    ]);
    expect(journal().at(-1)).toMatchObject({ type: "session-end", exit_code: 70, reason: `uuldana crashed: a test made uuldana crash; its agent was stopped with ${step}` });
  });
});

describe("an agent left running when its uuldana is gone", () => {
  beforeEach(() => {
    linkAgent(sandbox, "proof", "hangup-proof.mjs");
    sandbox.write("config/providers/proof.json", standInManifest("proof"));
    sandbox.write("config/config.json", { providers: ["proof", "leaving"], auto_detect: false });
  });

  it("is listed as orphaned, and sessions stop ends it and the session", async () => {
    const pids = join(sandbox.dir, "pids");
    const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, PID_FILE: pids } });
    terminals.push(terminal);
    await terminal.waitFor("hangup-proof ready");
    const [agent] = agentPids();
    process.kill(terminal.child.pid, "SIGKILL");
    await terminal.exited;
    const [id] = readdirSync(join(sandbox.data, "sessions"));
    expect(journal().find((event) => event.type === "run-start")).toMatchObject({ entry: "proof", pid: agent, pid_start: expect.stringMatching(/^[0-9a-f-]+:\d+$/) });
    expect(isAlive(agent!)).toBe(true);
    const listed = await sandbox.run(["sessions", "--json"]);
    expect(JSON.parse(listed.stdout)).toEqual([{ id, started: expect.stringMatching(/^\d{4}-/), cwd: sandbox.project, runs: ["proof"], state: "orphaned", exit_code: null, agent_pid: agent }]);
    expect((await sandbox.run(["sessions"])).stdout.split("\n")[1]).toMatch(new RegExp(`^${id}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC  ${sandbox.project}  proof  orphaned$`));
    // resuming it would put a second agent beside the one still running: uuldana says what to do first
    expect(await sandbox.run(["resume", id!])).toEqual({
      code: 2,
      stdout: "",
      stderr: `uuldana: session ${id}'s agent proof (pid ${agent}) still runs without its uuldana [E_SESSION_NOT_RESUMABLE]\nhint: end it with "uuldana sessions stop ${id}", then resume\n`,
    });
    expect((await sandbox.run(["sessions", "show", id!])).stdout.split("\n")[0]).toMatch(
      new RegExp(`^session ${id} · started \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC · ${sandbox.project} · orphaned: its agent \\(pid ${agent}\\) still runs without uuldana; "uuldana sessions stop ${id}" ends it$`),
    );
    const stopped = await sandbox.run(["sessions", "stop", id!]);
    expect(stopped).toEqual({ code: 0, stdout: `stopped proof (pid ${agent}), left running by session ${id} when its uuldana was gone, with SIGTERM\n`, stderr: "" });
    expect(isAlive(agent!)).toBe(false);
    expect(JSON.parse((await sandbox.run(["sessions", "--json"])).stdout)[0]).toMatchObject({ id, state: "ended", exit_code: null });
    expect((await sandbox.run(["sessions", "show", id!])).stdout.trim().split("\n").slice(-2).map((line) => line.slice(7))).toEqual([
      "proof ended (stopped by SIGTERM)",
      "session ended (its uuldana was gone; uuldana sessions stop stopped its agent with SIGTERM)",
    ]);
    expect(await sandbox.run(["sessions", "stop", id!])).toEqual({ code: 1, stdout: "", stderr: `uuldana: session ${id} has ended: no agent of it is running [E_SESSION_NOT_ORPHANED]\n` });
  });

  it("is not there when the agent left with its terminal: the session was interrupted, and stop says so", async () => {
    const pids = join(sandbox.dir, "pids");
    sandbox.write("config/config.json", { providers: ["leaving"], auto_detect: false });
    const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, PID_FILE: pids } });
    terminals.push(terminal);
    await terminal.waitFor("LEAVING AGENT ready");
    const [agent] = agentPids();
    process.kill(terminal.child.pid, "SIGKILL");
    await terminal.exited;
    await waitFor(() => !isAlive(agent!), "the agent to end with its terminal");
    const [id] = readdirSync(join(sandbox.data, "sessions"));
    expect(JSON.parse((await sandbox.run(["sessions", "--json"])).stdout)[0]).toMatchObject({ id, state: "interrupted" });
    expect(await sandbox.run(["sessions", "stop", id!])).toEqual({ code: 1, stdout: "", stderr: `uuldana: session ${id} was interrupted and none of its agents is running: there is nothing to stop [E_SESSION_NOT_ORPHANED]\n` });
  });
});

describe("the user's terminal closing under uuldana (its window closed, the connection dropped)", () => {
  it("stops the agent, ends the journal and exits 129, without Node aborting on the terminal that is gone", async () => {
    const pids = join(sandbox.dir, "pids");
    const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, PID_FILE: pids } });
    terminals.push(terminal);
    await terminal.waitFor("LEAVING AGENT ready");
    const [agent] = agentPids();
    // the terminal's other side closes: the kernel hangs up on uuldana, and every write to the terminal fails
    terminal.child.destroy();
    expect(await terminal.exited).toEqual({ exitCode: 129, signal: 0 });
    expect(isAlive(agent!)).toBe(false);
    const events = journal();
    expect(events.at(-2)).toMatchObject({ type: "run-end", entry: "leaving" });
    expect(events.at(-1)).toMatchObject({ type: "session-end", exit_code: 129 });
  });
});
