import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { updateCooldowns } from "../core/session/cooldowns.js";
import { formatInstant } from "../core/session/eligibility.js";
import { installAgents } from "./agents.js";
import { bin, fixtures, makeSandbox, sessionJournals, waitFor, type JournalLine, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// --wait: with every entry resting, the session waits for the first to return (its reset, or another process
// clearing its rest), then starts it with the conversation so far; Ctrl+C ends the wait.

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox, ["line", "limit"]);
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

// Rests for the entries, each this many milliseconds from now.
function rest(rows: Record<string, number>): Record<string, Date> {
  const until: Record<string, Date> = {};
  const entries: Record<string, unknown> = {};
  for (const [entry, ms] of Object.entries(rows)) {
    until[entry] = new Date(Date.now() + ms);
    entries[entry] = { until: until[entry]!.toISOString(), since: new Date().toISOString(), source: "manual", kind: "weekly", text: "rested by the test" };
  }
  sandbox.write("data/cooldowns.json", { version: 1, entries });
  return until;
}

function configure(more: Record<string, unknown> = {}): void {
  sandbox.write("config/config.json", { providers: ["line", "limit"], auto_detect: false, quiet_seconds: 0.3, ...more });
}

// With shell, through a shell that prints the terminal settings before uuldana starts and after it ends (it traps
// Ctrl+C for itself, so it lives on to say so).
function open(args: string[], env: Record<string, string> = {}, shell = false): TestTerminal {
  const full = { ...sandbox.env, TZ: "Europe/Berlin", ...env };
  const terminal = shell
    ? new TestTerminal("/bin/sh", ["-c", `trap : INT; stty -g; "${process.execPath}" "${bin}" "$@"; code=$?; echo "settings after: $(stty -g) code $code"`, "sh", ...args], { cwd: sandbox.project, env: full, cols: 160 })
    : new TestTerminal(process.execPath, [bin, ...args], { cwd: sandbox.project, env: full, cols: 160 });
  terminals.push(terminal);
  return terminal;
}

function journal(): JournalLine[] {
  return sessionJournals(sandbox.data)[0]!;
}

describe("uuldana run --wait", () => {
  it("waits for the first entry to return at its reset, then starts it, and tells notify_command once", async () => {
    const record = join(sandbox.dir, "events.jsonl");
    configure({ notify_command: [process.execPath, join(fixtures, "notify-record.mjs"), record] });
    const until = rest({ line: 1_800_000, limit: 3_600_000 });
    const terminal = open(["run", "--wait"]);
    const waiting = await terminal.waitFor("Ctrl+C to stop");
    expect(waiting).toContain(`  line: resting until ${formatInstant(until.line!)}`);
    expect(waiting).toContain(`  limit: resting until ${formatInstant(until.limit!)}`);
    expect(waiting.find((line) => line.startsWith("uuldana: every entry is resting"))).toMatch(
      new RegExp(`^uuldana: every entry is resting; waiting for line to return at ${formatInstant(until.line!)} \\(in [0-9]+m[0-9]{2}s\\) · Ctrl\\+C to stop$`),
    );
    // its rest is moved up to end in a second (a rest that ended that soon after the start could end before a
    // loaded machine had started uuldana): the session reads the change and waits for the new end
    await updateCooldowns(sandbox.data, (entries) => void entries.set("line", { ...entries.get("line")!, until: new Date(Date.now() + 1000) }));
    const screen = await terminal.waitFor("line agent ready", 20_000);
    expect(screen).toContain("uuldana: line has returned; the wait is over");
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    expect(journal().map((event) => event.type).slice(0, 4)).toEqual(["session-start", "skipped", "skipped", "wait"]);
    expect(journal().find((event) => event.type === "wait-end")).toMatchObject({ entry: "line" });
    expect(readFileSync(record, "utf8").trim().split("\n").map((line) => JSON.parse(line))).toEqual([
      { event: "wait", session: expect.any(String), from: "line", to: null, until: until.line!.toISOString(), text: `every entry is resting; waiting for line to return at ${formatInstant(until.line!)}` },
    ]);
  });

  it("starts an entry as soon as another process clears its rest", async () => {
    configure();
    rest({ line: 3_600_000, limit: 7_200_000 });
    const terminal = open(["run", "--wait"]);
    await terminal.waitFor("Ctrl+C to stop");
    expect((await sandbox.run(["cooldowns", "clear", "limit"])).stdout).toBe("Cleared: limit.\n");
    await terminal.waitFor(/limit agent ready|I refactored the parser/, 20_000);
    expect(terminal.raw).toContain("uuldana: limit has returned; the wait is over");
    terminal.kill();
  });

  it("continues the conversation by itself after a failover found every other entry resting", async () => {
    sandbox.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, quiet_seconds: 0.3, wait: true });
    rest({ line: 3_600_000 });
    const terminal = open(["run"], { LIMIT_MODE: "answer" });
    await terminal.waitFor("limit agent ready");
    terminal.type("please add a test for the lexer\r");
    await terminal.waitFor("waiting for line to return", 20_000);
    // its rest ends (another process clears it) once the session waits, however long the failover took
    expect((await sandbox.run(["cooldowns", "clear", "line"])).code).toBe(0);
    await terminal.waitFor("line agent ready", 20_000);
    const prompt = JSON.parse(/line agent ready; args: (\[.*\]); LEVEL_ENV/.exec(terminal.raw.replace(/\r?\n/g, " "))![1]!)[2] as string;
    expect(prompt).toContain("I answered: please add a test for the lexer");
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
  });

  it("ends cleanly on Ctrl+C during the wait: exit 130, the terminal as it was", async () => {
    configure();
    rest({ line: 3_600_000, limit: 3_600_000 });
    const terminal = open(["run", "--wait"], {}, true);
    const before = (await terminal.waitFor("Ctrl+C to stop"))[0]!;
    terminal.type("\x03");
    const screen = await terminal.waitFor("settings after: ");
    const after = screen.find((line) => line.startsWith("settings after: "))!;
    expect(after).toBe(`settings after: ${before} code 130`);
    expect(screen).toContain("uuldana: stopped by SIGINT");
  });

  it("without a terminal, says the wait once per change, with no carriage returns", async () => {
    configure();
    rest({ line: 3_600_000, limit: 3_600_000 });
    const child = spawn(process.execPath, [bin, "run", "--wait"], { cwd: sandbox.project, env: { ...sandbox.env, TZ: "Europe/Berlin" }, stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    let stdout = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.stdout.on("data", (chunk) => (stdout += chunk));
    await waitFor(() => stderr.includes("uuldana: every entry is resting"), "the wait");
    expect((await sandbox.run(["cooldowns", "clear", "line"])).code).toBe(0);
    await waitFor(() => stdout.includes("line agent ready"), "the line agent", 20_000);
    child.stdin.write("/exit\n");
    await new Promise((resolve) => child.on("exit", resolve));
    expect(stderr).not.toContain("\r");
    expect(stderr.split("\n").filter((line) => line.startsWith("uuldana: every entry is resting"))).toHaveLength(1);
    expect(stderr).toContain("uuldana: line has returned; the wait is over\n");
  });

  it("does not wait past wait_max_hours: exits 1 at once, as without waiting", () => {
    configure({ wait: true, wait_max_hours: 2 });
    rest({ line: 3 * 3_600_000, limit: 4 * 3_600_000 });
    const run = spawnSync(process.execPath, [bin, "run"], { cwd: sandbox.project, env: sandbox.env, encoding: "utf8" });
    expect(run.status).toBe(1);
    expect(run.stderr.split("\n")[0]).toBe("uuldana: not waiting: the first resting entry returns later than wait_max_hours allows");
  });

  it("goes on waiting when a session that was waiting is resumed", async () => {
    configure();
    rest({ line: 3_600_000, limit: 3_600_000 });
    const first = open(["run", "--wait"]);
    await first.waitFor("Ctrl+C to stop");
    first.type("\x03");
    expect((await first.exited).exitCode).toBe(130);
    const resumed = open(["resume"]);
    await resumed.waitFor("Ctrl+C to stop");
    expect(resumed.raw).toContain("waiting for line to return");
    resumed.type("\x03");
    expect((await resumed.exited).exitCode).toBe(130);
  });
});
