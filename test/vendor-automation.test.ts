import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { installAgents } from "./agents.js";
import { bin, LIMIT_RESET, linkAgent, makeSandbox, sessionJournals, uuldanaLines, waitFor, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// The vendors' own automation at a limit, in their current wording, under the built-in manifests: Claude Code gives
// up its own wait after repeated limits and tells its model to wrap up near its limit; Copilot CLI switches itself to
// its auto model.

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];
const GAVE_UP = "⚠ Automatic continue stopped after repeated usage limit hits · This task will not resume on its own (/rate-limit-options to try again)";
const WRAP_UP =
  "[Usage limit approaching. Checkpoint now: finish the current step, then list up to 3 short bullets of the most impactful remaining work. Don't start subagents or long-running work.]";

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox);
  linkAgent(sandbox, "claude", "quota-agent.mjs");
  linkAgent(sandbox, "copilot", "quota-agent.mjs");
  sandbox.write(".claude/.credentials.json", "{}");
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

function open(mode: string): TestTerminal {
  const env = { ...sandbox.env, TZ: "Europe/Berlin", QUOTA_MODE: mode, GH_TOKEN: "stand-in" };
  const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env, cols: 220 });
  terminals.push(terminal);
  return terminal;
}

const journal = (): Record<string, unknown>[] => sessionJournals(sandbox.data)[0]!;

describe("Claude Code's own wait for its reset", () => {
  it("left to the agent (native_wait allow), is taken back when the agent says it stopped continuing after repeated limits", async () => {
    sandbox.write("config/config.json", { providers: [{ id: "claude-code", native_wait: "allow" }, "line"], auto_detect: false, quiet_seconds: 0.3 });
    const terminal = open("auto-stop");
    await terminal.waitFor("quota agent ready");
    terminal.type("please tidy the lexer\r");
    await terminal.waitFor("line agent ready", 30_000);
    const events = journal();
    expect(events.find((event) => event.type === "limit")).toMatchObject({ entry: "claude-code", offer: "wait", native_wait: "allow", action: "left to the agent" });
    expect(events.find((event) => event.type === "native-wait-ended")).toEqual(expect.objectContaining({ entry: "claude-code", text: GAVE_UP }));
    expect(events.find((event) => event.type === "limit-taken-back")).toEqual(expect.objectContaining({ entry: "claude-code", why: `its own wait ended: ${GAVE_UP}` }));
    expect(events.filter((event) => event.type === "run-start").map((event) => event.entry)).toEqual(["claude-code", "line"]);
    expect(uuldanaLines(terminal.raw)).toContain(
      `uuldana: claude-code's weekly limit is gone; it rests until ${LIMIT_RESET.shown}; continuing with line (Stand-in line 1.0.0) at ask with the conversation so far (claude-code's part from its screen: its transcript could not be found or read) · ctrl-] opens uuldana's prompt`,
    );
    terminal.type("/exit\r");
    await terminal.exited;
  });
});

describe("Claude Code's note to wrap up near its limit", () => {
  it("is a warning: journaled, and the agent keeps running, without rotate_at_percent_left", async () => {
    sandbox.write("config/config.json", { providers: ["claude-code", "line"], auto_detect: false, quiet_seconds: 0.3 });
    const terminal = open("wrap-up");
    await terminal.waitFor("quota agent ready");
    terminal.type("please tidy the lexer\r");
    await terminal.waitFor("left to do: the parser's tests");
    await waitFor(() => journal().some((event) => event.type === "wrap-up"), "the wrap-up line");
    expect(journal().find((event) => event.type === "wrap-up")).toEqual(expect.objectContaining({ entry: "claude-code", text: WRAP_UP, rotates: false }));
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    expect(journal().some((event) => event.type === "limit")).toBe(false);
    expect(journal().filter((event) => event.type === "run-start").map((event) => event.entry)).toEqual(["claude-code"]);
  });

  it("starts a rotation at the next turn boundary when rotate_at_percent_left is set", async () => {
    sandbox.write("config/config.json", { providers: ["claude-code", "line"], auto_detect: false, quiet_seconds: 0.3, rotate_at_percent_left: 10 });
    const terminal = open("wrap-up");
    await terminal.waitFor("quota agent ready");
    terminal.type("please tidy the lexer\r");
    await terminal.waitFor("line agent ready", 30_000);
    const events = journal();
    const said = uuldanaLines(terminal.raw).at(-1)!;
    const rests = / it rests until (\d{4}-\d\d-\d\d \d\d:\d\d UTC);/.exec(said)?.[1];
    expect(said).toBe(
      `uuldana: claude-code: it was told to wrap up, its window nearly spent ("${WRAP_UP}"), so it was rotated before its allowance ran out; it rests until ${rests}; continuing with line (Stand-in line 1.0.0) at ask with the conversation so far (claude-code's part from its screen: its transcript could not be found or read) · ctrl-] opens uuldana's prompt`,
    );
    expect(events.find((event) => event.type === "wrap-up")).toEqual(expect.objectContaining({ entry: "claude-code", text: WRAP_UP, rotates: true }));
    expect(events.find((event) => event.type === "limit")).toMatchObject({ entry: "claude-code", reason: "rotate", after: "turn boundary", window: "wrap-up", percent_left: 5, threshold: 10 });
    terminal.type("/exit\r");
    await terminal.exited;
  });
});

describe("Copilot CLI's own switch to its auto model", () => {
  it("is noted and left to the agent (its manifest's default), which answers on", async () => {
    sandbox.write("config/config.json", { providers: ["copilot", "line"], auto_detect: false, quiet_seconds: 0.3 });
    const terminal = open("auto-model");
    await terminal.waitFor("quota agent ready");
    terminal.type("please tidy the lexer\r");
    await terminal.waitFor("I answered again on the auto model.");
    await waitFor(() => journal().some((event) => event.type === "native-switch"), "the switch line");
    expect(journal().find((event) => event.type === "native-switch")).toEqual(expect.objectContaining({ entry: "copilot", text: "● Limit reached. Model changed to Auto.", native_wait: "allow" }));
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    expect(journal().filter((event) => event.type === "run-start").map((event) => event.entry)).toEqual(["copilot"]);
  });
});
