import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { installAgents } from "./agents.js";
import { bin, linkAgent, makeSandbox, waitFor, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// The built-in manifests and adapters, run against stand-ins that write what the real CLIs write: Claude Code's
// status line (uuldana's settings reach it through --settings, it runs their statusLine command after each answer with
// its status JSON on stdin, and the user's own status-line command still runs and shows) and Codex CLI's rollout file
// (token counts with rate limits, in the account's sessions folder).

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];
const RESETS_AT = Math.floor(Date.now() / 1000) + 2 * 3600 + 13 * 60;

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox, ["line"]);
  linkAgent(sandbox, "claude", "status-agent.mjs");
  sandbox.write("config/config.json", { providers: ["claude-code", "line"], auto_detect: false, quiet_seconds: 0.3, dismiss_seconds: 5, rotate_at_percent_left: 5 });
  // the user's own status line, in their Claude settings: it must still run, on the same status
  sandbox.write(".claude/settings.json", { statusLine: { type: "command", command: "printf \"keeper's line: %s bytes\" \"$(wc -c | tr -d ' ')\"" } });
  // signed in, as Claude Code's login leaves it: an entry that is not would be skipped
  sandbox.write(".claude/.credentials.json", "{}");
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

function journalOf(): Record<string, unknown>[] {
  const sessions = join(sandbox.data, "sessions");
  const folder = join(sessions, readdirSync(sessions)[0]!);
  return readFileSync(join(folder, "journal.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("Claude Code's status line as a native source", () => {
  it("feeds uuldana the real status JSON, keeps the user's own status line, and rotates at 97% with the exact reset", async () => {
    const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, STATUS_USED: "50,97", STATUS_RESETS_AT: String(RESETS_AT) }, cols: 160 });
    terminals.push(terminal);
    await terminal.waitFor("status stand-in ready");
    terminal.type("Which colour is the lighthouse?\r");
    await terminal.waitFor("Answer 1");
    await terminal.waitFor("keeper's line:");
    // the second question once the first reading is in: two readings a moment apart are taken as one
    await waitFor(() => journalOf().some((event) => event.type === "quota"), "the first reading");
    terminal.type("And how tall is it?\r");
    await terminal.waitFor("line agent ready", 20_000);
    const args = JSON.parse(/line agent ready; args: (\[.*\]); LEVEL_ENV/.exec(terminal.raw.replace(/\r?\n/g, " "))![1]!) as string[];
    terminal.type("/exit\r");
    await terminal.exited;
    const folder = join(sandbox.data, "sessions", readdirSync(join(sandbox.data, "sessions"))[0]!);
    const events = journalOf();
    const start = events.find((event) => event.type === "run-start" && event.entry === "claude-code") as { argv: string[] };
    expect(start.argv.slice(1, 5)).toEqual(["--permission-mode", "default", "--session-id", start.argv[4]!]);
    expect(start.argv.slice(5, 7)).toEqual(["--settings", join(folder, "settings-1.json")]);
    // the run's own settings: the relay, then the user's command, quoted for the shell; the user's file is untouched
    const settings = JSON.parse(readFileSync(join(folder, "settings-1.json"), "utf8")) as { statusLine: { type: string; command: string } };
    expect(settings.statusLine.type).toBe("command");
    expect(settings.statusLine.command).toContain(`'${join(folder, "status-1.json")}'`);
    expect(statSync(join(folder, "status-1.json")).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(sandbox.dir, ".claude", "settings.json"), "utf8"))).toEqual({ statusLine: { type: "command", command: "printf \"keeper's line: %s bytes\" \"$(wc -c | tr -d ' ')\"" } });
    expect(terminal.raw).toMatch(/keeper's line: \d+ bytes/);
    const reset = new Date(RESETS_AT * 1000).toISOString();
    expect(events.filter((event) => event.type === "quota").map((event) => event.windows)).toEqual([
      [expect.objectContaining({ name: "five_hour", usedPercent: 50, resetsAt: reset }), expect.objectContaining({ name: "seven_day", usedPercent: 41 })],
      [expect.objectContaining({ name: "five_hour", usedPercent: 97, resetsAt: reset }), expect.objectContaining({ name: "seven_day", usedPercent: 41 })],
    ]);
    expect(events.filter((event) => event.type === "limit")).toEqual([expect.objectContaining({ entry: "claude-code", source: "native", reason: "rotate", kind: "session", reset_at: reset, percent_left: 3 })]);
    expect(args.at(-1)!.split("\n")[0]).toContain("You are continuing a conversation from Claude Code (claude-code), which was rotated before its usage allowance ran out (its five_hour window had 3% left, at or below rotate_at_percent_left 5).");
  });
});

describe("Codex CLI's rollout as a native source", () => {
  it("reads the token counts a stand-in writes where Codex does, and rotates at 97% with the exact reset", async () => {
    linkAgent(sandbox, "codex", "rollout-agent.mjs");
    const home = join(sandbox.dir, "codex-home");
    // signed in, as Codex's login leaves its CODEX_HOME: an entry that is not would be skipped
    sandbox.write("codex-home/auth.json", "{}");
    sandbox.write("config/config.json", { providers: [{ id: "codex", env: { CODEX_HOME: home } }, "line"], auto_detect: false, quiet_seconds: 0.3, dismiss_seconds: 5, rotate_at_percent_left: 5 });
    const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, TZ: "UTC", ROLLOUT_USED: "50,97", ROLLOUT_RESETS_AT: String(RESETS_AT) }, cols: 160 });
    terminals.push(terminal);
    await terminal.waitFor("rollout stand-in ready");
    terminal.type("Which colour is the lighthouse?\r");
    await terminal.waitFor("Answer 1");
    terminal.type("And how tall is it?\r");
    await terminal.waitFor("line agent ready", 20_000);
    terminal.type("/exit\r");
    await terminal.exited;
    const events = journalOf();
    const reset = new Date(RESETS_AT * 1000).toISOString();
    expect(events.filter((event) => event.type === "limit")).toEqual([expect.objectContaining({ entry: "codex", source: "native", reason: "rotate", kind: "session", reset_at: reset, window: "primary", percent_left: 3 })]);
    expect(events.find((event) => event.type === "conversation" && event.entry === "codex")).toMatchObject({ source: "transcript", turns: 4 });
  });
});
