import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { EXIT, installAgents } from "./agents.js";
import { bin, LIMIT_RESET, makeSandbox, sessionJournals, standInManifest, waitFor, type JournalLine, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// An agent that waits for its reset by itself, or switches itself to another model: its manifest names the lines it
// shows then and what uuldana does by default; an entry's native_wait says otherwise.

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];

const LEVELS = { "read-only": { args: ["--read-only"] }, ask: { args: ["--ask"] } };
const WAITS = { waits: ["\\b[Cc]ontinuing automatically at \\S"], default: "failover" };
const SWITCHES = { switches: ["\\bSwitching to the \\S+ model\\b"], default: "allow" };

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox, ["line"]);
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

function setUp(nativeWait: Record<string, unknown>, limitEntry: string | Record<string, unknown> = "limit"): void {
  sandbox.write("config/providers/limit.json", standInManifest("limit", { levels: LEVELS, exit: EXIT, native_wait: nativeWait }));
  sandbox.write("config/config.json", { providers: [limitEntry, "line"], auto_detect: false, quiet_seconds: 0.3, dismiss_seconds: 2 });
}

function open(env: Record<string, string>): TestTerminal {
  const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, TZ: "Europe/Berlin", ...env }, cols: 220 });
  terminals.push(terminal);
  return terminal;
}

function journal(): JournalLine[] {
  return sessionJournals(sandbox.data)[0]!;
}

async function ask(terminal: TestTerminal): Promise<void> {
  await terminal.waitFor("limit agent ready");
  terminal.type("please add a test for the lexer\r");
}

describe("an agent's own wait for its reset", () => {
  it("is left for the next entry by default (failover), and the choice is journaled", async () => {
    setUp(WAITS);
    const terminal = open({ LIMIT_MODE: "answer", LIMIT_WAIT: "1" });
    await ask(terminal);
    await terminal.waitFor("line agent ready", 20_000);
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    expect(journal().find((event) => event.type === "limit")).toMatchObject({ entry: "limit", text: LIMIT_RESET.message, offer: "wait", native_wait: "failover", action: "failover" });
  });

  it("with native_wait \"allow\", lets the agent wait: it rests, keeps running, and the session ends with it", async () => {
    setUp(WAITS, { id: "limit", native_wait: "allow" });
    const terminal = open({ LIMIT_MODE: "answer", LIMIT_WAIT: "1" });
    await ask(terminal);
    await waitFor(() => journal().some((event) => event.type === "cooldown"), "the rest of the entry", 20_000);
    expect(journal().find((event) => event.type === "limit")).toMatchObject({ offer: "wait", native_wait: "allow", action: "left to the agent" });
    const list = JSON.parse((await sandbox.run(["providers", "list", "--json"])).stdout) as { entry: string; resting_until: string | null }[];
    expect(list.find((row) => row.entry === "limit")?.resting_until).toBe(LIMIT_RESET.iso);
    // still the same agent, still waiting: the user types to it, and it ends the session
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    const screen = await terminal.waitFor("so it was left to wait for its reset by itself");
    expect(screen.join("\n")).not.toContain("line agent ready");
    expect(screen).toContain(
      `uuldana: limit said its usage allowance is gone (weekly limit; rests until ${LIMIT_RESET.shown}); native_wait is "allow", so it was left to wait for its reset by itself`,
    );
  });

  it("with native_wait \"allow\", steps in once the agent stops for good: it exits with a failing status", async () => {
    setUp(WAITS, { id: "limit", native_wait: "allow" });
    const terminal = open({ LIMIT_MODE: "answer", LIMIT_WAIT: "1" });
    await ask(terminal);
    await waitFor(() => journal().some((event) => event.type === "cooldown"), "the rest of the entry", 20_000);
    terminal.type("exit 3\r");
    await terminal.waitFor("line agent ready", 20_000);
    const prompt = JSON.parse(/line agent ready; args: (\[.*\]); LEVEL_ENV/.exec(terminal.raw.replace(/\r?\n/g, " "))![1]!)[2] as string;
    expect(prompt).toContain("I answered: please add a test for the lexer");
    expect(prompt).not.toContain("Continuing automatically");
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    expect(journal().find((event) => event.type === "limit-taken-back")).toMatchObject({ entry: "limit", why: "it exited with status 3" });
  });

  it("with native_wait \"allow\", steps in when a new limit message comes and the screen no longer shows the wait", async () => {
    setUp(WAITS, { id: "limit", native_wait: "allow" });
    const terminal = open({ LIMIT_MODE: "answer", LIMIT_WAIT: "1" });
    await ask(terminal);
    await waitFor(() => journal().some((event) => event.type === "cooldown"), "the rest of the entry", 20_000);
    // Escape cancels the wait; the next request meets the limit again, with no wait this time
    terminal.type("\x1b");
    await terminal.waitFor("Automatic continue cancelled");
    await new Promise((resolve) => setTimeout(resolve, 300));
    terminal.type("and the parser too\r");
    await terminal.waitFor("line agent ready", 20_000);
    terminal.type("/exit\r");
    await terminal.exited;
    // the limit entry's (line, the stand-in, echoes its handoff prompt JSON-quoted, which quotes the limit message: on
    // a loaded machine that echo can stand quiet long enough before /exit comes to be read as line's own limit)
    const limits = journal().filter((event) => event.type === "limit" && event.entry === "limit");
    // the second, with no wait on the screen, is an ordinary limit: no offer, the session moved on
    expect(limits.map((event) => [event.offer, event.native_wait, event.action])).toEqual([
      ["wait", "allow", "left to the agent"],
      [undefined, undefined, undefined],
    ]);
    expect(limits[1]!.text).toBe(`You've hit your weekly limit · /upgrade to increase your limit · resets ${LIMIT_RESET.text}`);
  });
});

describe("an agent that switches itself to another model", () => {
  it("carries on by default (allow), and the switch is journaled once", async () => {
    setUp(SWITCHES);
    const terminal = open({ LIMIT_MODE: "switch" });
    await ask(terminal);
    await terminal.waitFor("I answered on gemini-2.5-flash: please add a test for the lexer");
    await waitFor(() => journal().some((event) => event.type === "native-switch"), "the switch in the journal");
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    const events = journal();
    expect(events.filter((event) => event.type === "native-switch")).toEqual([
      {
        type: "native-switch",
        at: expect.any(String),
        entry: "limit",
        text: "Possible quota limitations in place or slow response times detected. Switching to the gemini-2.5-flash model for the rest of this session.",
        native_wait: "allow",
      },
    ]);
    expect(events.some((event) => event.type === "limit")).toBe(false);
  });

  it("with native_wait \"failover\", moves the conversation on: the model it left is spent", async () => {
    setUp({ ...SWITCHES, default: "failover" });
    const terminal = open({ LIMIT_MODE: "switch" });
    await ask(terminal);
    const screen = await terminal.waitFor("line agent ready", 20_000);
    expect(screen.some((line) => line.startsWith("uuldana: limit's per-model limit is gone;"))).toBe(true);
    terminal.type("/exit\r");
    await terminal.exited;
    expect(journal().find((event) => event.type === "limit")).toMatchObject({
      kind: "per-model",
      after: "its own switch",
      offer: "switch",
      native_wait: "failover",
      text: "Possible quota limitations in place or slow response times detected. Switching to the gemini-2.5-flash model for the rest of this session.",
    });
  });
});
