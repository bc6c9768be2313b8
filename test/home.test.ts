import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { formatInstant } from "../core/session/eligibility.js";
import { EXIT, installAgents } from "./agents.js";
import { bin, fixtures, linkAgent, makeSandbox, REST_MS, sessionJournals, sleepUntil, standInManifest, waitFor, type JournalLine, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// Rests shared across sessions (another session rests the running entry: this one moves on at its next idle
// prompt), and return_home (an entry higher in the list has rested: the session goes back to it at an idle prompt,
// with a brief of what the fallback did, once per reset).

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox, ["limit", "line"]);
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

function open(env: Record<string, string> = {}): TestTerminal {
  const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, TZ: "Europe/Berlin", LIMIT_MODE: "answer", ...env }, cols: 220 });
  terminals.push(terminal);
  return terminal;
}

// Every session's journal, oldest first.
function journals(): JournalLine[][] {
  return sessionJournals(sandbox.data);
}

function prompt(file: string): string {
  const folder = join(sandbox.data, "sessions");
  const [session] = readdirSync(folder);
  return readFileSync(join(folder, session!, file), "utf8");
}

describe("rests shared across running sessions", () => {
  it("moves a second session on at its idle prompt once the first rests their entry", async () => {
    sandbox.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, quiet_seconds: 0.3 });
    const second = open();
    await second.waitFor("limit agent ready");
    await waitFor(() => readdirSync(join(sandbox.data, "sessions")).length === 1, "the second session's journal");
    const first = open();
    await first.waitFor("limit agent ready");
    first.type("please add a test for the lexer\r");
    await first.waitFor("line agent ready", 20_000);
    // the second one's user typed nothing: it moves on without meeting the wall itself
    await second.waitFor("line agent ready", 20_000);
    expect(second.raw).toContain("uuldana: limit was rested by another uuldana session (weekly limit)");
    second.type("/exit\r");
    first.type("/exit\r");
    await Promise.all([first.exited, second.exited]);
    // one session met the wall and rested the entry; the other learnt it from the cooldown table
    const limits = journals().map((journal) => journal.find((event) => event.type === "limit")!);
    expect(limits.map((event) => [event.reason, event.after]).sort()).toEqual([
      ["limit", "quiet"],
      ["shared-rest", "turn boundary"],
    ]);
    const shared = journals().find((journal) => journal.some((event) => event.type === "limit" && event.reason === "shared-rest"))!;
    expect(shared.find((event) => event.type === "handoff-from")).toMatchObject({ entry: "limit", reason: "shared-rest" });
    // the rest is the first session's, written once
    expect(shared.some((event) => event.type === "cooldown")).toBe(false);
  });
});

describe("return_home", () => {
  it("goes back to the preferred entry at the fallback's idle prompt once it has rested, with a brief of what the fallback did", async () => {
    const record = join(sandbox.dir, "events.jsonl");
    sandbox.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, quiet_seconds: 0.3, return_home: true, notify_command: [process.execPath, join(fixtures, "notify-record.mjs"), record] });
    const until = new Date(Date.now() + REST_MS);
    sandbox.write("data/cooldowns.json", { version: 1, entries: { limit: { until: until.toISOString(), since: new Date().toISOString(), source: "manual", kind: "weekly", text: "rested by the test" } } });
    const terminal = open();
    await terminal.waitFor("line agent ready");
    terminal.type("please add a test for the lexer\r");
    await terminal.waitFor("you said: please add a test for the lexer");
    await terminal.waitFor("limit agent ready", 20_000);
    expect(terminal.raw).toContain("uuldana: limit has rested (its allowance returned at");
    const [journal] = journals();
    expect(journal!.find((event) => event.type === "home")).toMatchObject({ entry: "line", to: "limit", rested_until: until.toISOString() });
    expect(journal!.find((event) => event.type === "handoff-from")).toMatchObject({ entry: "line", reason: "home" });
    expect(journal!.some((event) => event.type === "cooldown")).toBe(false);
    expect(prompt("prompt-1.txt").split("\n")[0]).toBe(
      "You are continuing a conversation from Stand-in line (line), which took over while you rested and now hands the work back to you (since then it took 1 request from the user; what it changed is not known (its part below is from its screen)). Below is the conversation so far, each turn once and in order, labelled with who said it: from the agents' own transcripts where uuldana could read them, else as their screens showed it. Hidden reasoning, the earlier agents' memory, approvals they had been given and tool calls still running did not carry over: check the state of the files before relying on them.",
    );
    expect(prompt("prompt-1.txt")).toContain("you said: please add a test for the lexer");
    // the whole line: the notify_command may have made the file and not yet written it
    await waitFor(() => existsSync(record) && readFileSync(record, "utf8").endsWith("\n"), "the notification");
    expect(JSON.parse(readFileSync(record, "utf8"))).toEqual({
      event: "home",
      session: expect.any(String),
      from: "line",
      to: "limit",
      until: until.toISOString(),
      text: `limit has rested (its allowance returned at ${formatInstant(until)}); line hands the work back to limit`,
    });
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
  });

  it("waits while the user is typing: not with a half-typed line", async () => {
    sandbox.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, quiet_seconds: 0.3, return_home: true });
    const until = new Date(Date.now() + REST_MS);
    sandbox.write("data/cooldowns.json", { version: 1, entries: { limit: { until: until.toISOString(), since: new Date().toISOString(), source: "manual", kind: "weekly", text: "rested by the test" } } });
    const terminal = open();
    await terminal.waitFor("line agent ready");
    terminal.type("half a req");
    // well past the end of its rest
    await sleepUntil(until.getTime() + 1500);
    expect(terminal.raw).not.toContain("limit agent ready");
    terminal.type("uest\r");
    await terminal.waitFor("limit agent ready", 20_000);
    terminal.type("/exit\r");
    await terminal.exited;
  });

  it("comes back to the fallback, once, when the preferred entry does not take over", async () => {
    linkAgent(sandbox, "quitter", "receiver-agent.mjs");
    sandbox.write("config/providers/quitter.json", standInManifest("quitter", { exit: EXIT }));
    sandbox.write("config/config.json", { providers: ["quitter", "line"], auto_detect: false, quiet_seconds: 0.3, return_home: true, receiver_seconds: 2 });
    sandbox.write("data/cooldowns.json", { version: 1, entries: { quitter: { until: new Date(Date.now() + REST_MS).toISOString(), since: new Date().toISOString(), source: "manual", kind: "weekly", text: "rested by the test" } } });
    const terminal = open();
    await terminal.waitFor("line agent ready");
    terminal.type("please add a test for the lexer\r");
    await waitFor(() => journals()[0]!.filter((event) => event.type === "run-start" && event.entry === "line").length === 2, "the fallback again", 20_000);
    await terminal.waitFor(/line agent ready; args: \["--base","--ask","You are continuing your own conversation as Stand-in line \(line\): it was to go back to an agent that had rested, which did not take it, so it comes back to you\./);
    expect(terminal.raw).toContain("uuldana: quitter did not take over (it exited with status 0 before it took the conversation");
    // its rest is over and it did not take the work: nothing to go back to, however long the fallback runs
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((terminal.raw.match(/quitter did not take over/g) ?? []).length).toBe(1);
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
  });

  it("stays where it is without return_home", async () => {
    sandbox.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, quiet_seconds: 0.3 });
    const until = new Date(Date.now() + REST_MS);
    sandbox.write("data/cooldowns.json", { version: 1, entries: { limit: { until: until.toISOString(), since: new Date().toISOString(), source: "manual", kind: "weekly", text: "rested by the test" } } });
    const terminal = open();
    await terminal.waitFor("line agent ready");
    // well past the end of its rest
    await sleepUntil(until.getTime() + 1500);
    expect(terminal.raw).not.toContain("limit agent ready");
    terminal.type("/exit\r");
    await terminal.exited;
  });
});
