import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { EXIT, installAgents } from "./agents.js";
import { bin, LIMIT_RESET, linkAgent, makeSandbox, sessionJournals, standInManifest, uuldanaLines, waitFor, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// An agent at its limit that offers paid usage (Claude Code's usage credits, in its own words): the user's
// paid_usage decides, "never" unless the user's own config.json says otherwise.

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];
const OFFER = "Run /usage-credits to raise it and keep using Claude";
const FAILOVER = `uuldana: paid's weekly limit is gone; it rests until ${LIMIT_RESET.shown}; continuing with line (Stand-in line 1.0.0) at ask with the conversation so far · ctrl-] opens uuldana's prompt`;

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox);
  linkAgent(sandbox, "paid", "quota-agent.mjs");
  sandbox.write("config/providers/paid.json", standInManifest("paid", { exit: EXIT }));
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

function configure(more: Record<string, unknown>): void {
  sandbox.write("config/config.json", { providers: ["paid", "line"], auto_detect: false, quiet_seconds: 0.3, ...more });
}

function open(args: string[], mode = "paid"): TestTerminal {
  const env = { ...sandbox.env, TZ: "Europe/Berlin", QUOTA_MODE: mode };
  const terminal = new TestTerminal(process.execPath, [bin, ...args], { cwd: sandbox.project, env, cols: 220 });
  terminals.push(terminal);
  return terminal;
}

// The session's limit line, once written.
async function limitLine(): Promise<Record<string, unknown>> {
  await waitFor(() => existsSync(join(sandbox.data, "sessions")) && sessionJournals(sandbox.data)[0]!.some((event) => event.type === "limit"), "the limit line");
  return sessionJournals(sandbox.data)[0]!.find((event) => event.type === "limit")!;
}

const restsOf = (): Record<string, unknown> =>
  existsSync(join(sandbox.data, "cooldowns.json")) ? (JSON.parse(readFileSync(join(sandbox.data, "cooldowns.json"), "utf8")) as { entries: Record<string, unknown> }).entries : {};

describe("paid_usage at a limit that offers paid usage", () => {
  it("never (the default): leaves the offer and fails over, the limit line saying what was offered", async () => {
    configure({});
    const terminal = open(["run"]);
    await terminal.waitFor("quota agent ready");
    terminal.type("please tidy the lexer\r");
    await terminal.waitFor("line agent ready", 20_000);
    expect(uuldanaLines(terminal.raw)).toContain(FAILOVER);
    expect(await limitLine()).toMatchObject({ entry: "paid", kind: "weekly", paid_offer: true, offered: OFFER, paid_usage: "never", action: "failover" });
    terminal.type("/exit\r");
    await terminal.exited;
    expect(Object.keys(restsOf())).toEqual(["paid"]);
  });

  it("allow: leaves it to the agent, which keeps running, rests nothing, and says when it spends", async () => {
    configure({ paid_usage: "allow" });
    const terminal = open(["run"]);
    await terminal.waitFor("quota agent ready");
    terminal.type("please tidy the lexer\r");
    expect(await limitLine()).toMatchObject({ entry: "paid", paid_offer: true, offered: OFFER, paid_usage: "allow", action: "left to the agent" });
    terminal.type("go on with it\r");
    await terminal.waitFor("Opus is drawing from usage credits");
    await waitFor(() => terminal.title === "uuldana · paid · ask · spending paid credits", "the title");
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    const lines = uuldanaLines(terminal.raw);
    expect(lines.some((line) => line.startsWith("uuldana: paid's weekly limit is gone"))).toBe(false);
    expect(lines).toContain(`uuldana: paid said its usage allowance is gone (weekly limit) and offered paid usage ("${OFFER}"); paid_usage is "allow", so it was left to go on with it, and nothing rests`);
    expect(restsOf()).toEqual({});
    const spending = sessionJournals(sandbox.data)[0]!.find((event) => event.type === "paid-spending");
    expect(spending).toMatchObject({ entry: "paid", text: "⏵ Opus is drawing from usage credits", paid_usage: "allow", allowed: true });
  });

  it("ask: shows the offer and the alternative in uuldana's prompt, and does what the user chooses", async () => {
    configure({ paid_usage: "ask", dismiss_seconds: 60 });
    const terminal = open(["run"]);
    await terminal.waitFor("quota agent ready");
    terminal.type("please tidy the lexer\r");
    const screen = await terminal.waitFor("Type 1 or 2.");
    expect(screen).toContain(`paid's usage allowance is gone, and it offers paid usage: "${OFFER}".`);
    expect(screen).toContain("Paid usage costs money; uuldana takes it only if you say so.");
    expect(screen).toContain("1  let paid go on with paid usage (you may be charged; nothing rests)");
    expect(screen).toContain(`2  move on to line now; paid returns at ${LIMIT_RESET.shown}`);
    terminal.type("1");
    expect(await limitLine()).toMatchObject({ entry: "paid", paid_offer: true, paid_usage: "ask", answer: "go on", action: "left to the agent" });
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    expect(uuldanaLines(terminal.raw)).toContain(`uuldana: paid said its usage allowance is gone (weekly limit) and offered paid usage ("${OFFER}"); you chose to let it go on with it, and nothing rests`);
    expect(restsOf()).toEqual({});
  });

  it("ask: the alternative chosen fails over as at any limit", async () => {
    configure({ paid_usage: "ask", dismiss_seconds: 60 });
    const terminal = open(["run"]);
    await terminal.waitFor("quota agent ready");
    terminal.type("please tidy the lexer\r");
    await terminal.waitFor("Type 1 or 2.");
    terminal.type("2");
    await terminal.waitFor("line agent ready", 20_000);
    expect(uuldanaLines(terminal.raw)).toContain(FAILOVER);
    expect(await limitLine()).toMatchObject({ paid_usage: "ask", answer: "move on", action: "failover" });
    terminal.type("/exit\r");
    await terminal.exited;
  });

  it("ask: with no answer within dismiss_seconds it acts as never", async () => {
    configure({ paid_usage: "ask", dismiss_seconds: 1 });
    const terminal = open(["run"]);
    await terminal.waitFor("quota agent ready");
    terminal.type("please tidy the lexer\r");
    await terminal.waitFor("Type 1 or 2.");
    await terminal.waitFor("line agent ready", 20_000);
    expect(uuldanaLines(terminal.raw)).toContain(FAILOVER);
    expect(await limitLine()).toMatchObject({ paid_usage: "ask", answer: "no answer", action: "failover" });
    terminal.type("/exit\r");
    await terminal.exited;
  });

  it("ask, in an unattended run (--wait): acts as never without asking", async () => {
    configure({ paid_usage: "ask", dismiss_seconds: 60 });
    const terminal = open(["run", "--wait"]);
    await terminal.waitFor("quota agent ready");
    terminal.type("please tidy the lexer\r");
    await terminal.waitFor("line agent ready", 20_000);
    expect(terminal.raw).not.toContain("Type 1 or 2.");
    expect(await limitLine()).toMatchObject({ paid_usage: "ask", answer: "unattended", action: "failover" });
    terminal.type("/exit\r");
    await terminal.exited;
  });
});

describe("an agent that spends paid credits", () => {
  it("with never: the title and journal say so, and the session moves on at the next turn boundary", async () => {
    configure({});
    const terminal = open(["run"], "spend");
    await terminal.waitFor("quota agent ready");
    terminal.type("please tidy the lexer\r");
    await terminal.waitFor("line agent ready", 20_000);
    const journal = sessionJournals(sandbox.data)[0]!;
    expect(journal.find((event) => event.type === "paid-spending")).toMatchObject({ entry: "paid", text: "⏵ Opus is drawing from usage credits", paid_usage: "never", allowed: false });
    expect(journal.find((event) => event.type === "limit")).toMatchObject({ entry: "paid", kind: "credits", after: "turn boundary", paid_offer: true, paid_usage: "never", action: "failover" });
    expect(terminal.raw).toContain("uuldana · paid · ask · spending paid credits");
    terminal.type("/exit\r");
    await terminal.exited;
  });
});
