import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { EXIT, installAgents } from "./agents.js";
import { bin, LIMIT_RESET, linkAgent, makeSandbox, sessionJournals, standInManifest, type JournalLine, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// A handoff counts once the new agent has taken the conversation: one stuck at a sign-in screen or one that exits at
// once is skipped with its reason, does not rest, and the next entry gets the same conversation.

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox, ["line"]);
  for (const id of ["signin", "quitter"]) {
    linkAgent(sandbox, id, "receiver-agent.mjs");
    sandbox.write(`config/providers/${id}.json`, standInManifest(id, { exit: EXIT }));
  }
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

function configure(providers: string[], more: Record<string, unknown> = {}): void {
  sandbox.write("config/config.json", { providers, auto_detect: false, quiet_seconds: 0.3, receiver_seconds: 1, ...more });
}

function open(): TestTerminal {
  const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, TZ: "Europe/Berlin", LIMIT_MODE: "answer" }, cols: 220 });
  terminals.push(terminal);
  return terminal;
}

function journal(): JournalLine[] {
  return sessionJournals(sandbox.data)[0]!;
}

// The limit stand-in answers one request, then its allowance is gone.
async function reachLimit(terminal: TestTerminal): Promise<void> {
  await terminal.waitFor("limit agent ready");
  terminal.type("please add a test for the lexer\r");
}

// The prompt the line stand-in was started with.
function lineArgs(terminal: TestTerminal): string[] {
  return JSON.parse(/line agent ready; args: (\[.*\]); LEVEL_ENV/.exec(terminal.raw.replace(/\r?\n/g, " "))![1]!) as string[];
}

describe("an agent handed the conversation must take it", () => {
  it("skips one that waits at a sign-in screen, with its reason and last lines, and hands the same conversation to the next", async () => {
    configure(["limit", "signin", "line"]);
    const terminal = open();
    await reachLimit(terminal);
    const screen = await terminal.waitFor("line agent ready", 20_000);
    expect(screen).toContain(`uuldana: signin did not take over (it did not take the conversation within 1 s; its screen ends "Press Enter to choose"); trying the next entry`);
    const prompt = lineArgs(terminal)[2]!;
    expect(prompt).toContain("You are continuing a conversation from Stand-in limit (limit)");
    expect(prompt).toContain("I answered: please add a test for the lexer");
    // the same conversation as the stuck agent was given, nothing of its sign-in screen
    const [session] = readdirSync(join(sandbox.data, "sessions"));
    expect(readFileSync(join(sandbox.data, "sessions", session!, "prompt-1.txt"), "utf8")).toBe(prompt);
    expect(prompt).not.toContain("Sign in");
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);

    const events = journal();
    const receivers = events.filter((event) => event.type === "receiver");
    expect(receivers).toEqual([
      {
        type: "receiver",
        at: expect.any(String),
        entry: "signin",
        took: false,
        reason: "it did not take the conversation within 1 s",
        lines: ["Welcome to the stand-in agent.", "Sign in to continue:", "  1. Sign in with your browser", "  2. Paste an API key", "Press Enter to choose"],
      },
      { type: "receiver", at: expect.any(String), entry: "line", took: true, by: "screen", after_ms: expect.any(Number) },
    ]);
    expect(events.find((event) => event.type === "start-failed")).toMatchObject({
      entry: "signin",
      reason: `it did not take the conversation within 1 s; its screen ends "Press Enter to choose"`,
      receiver: true,
    });
    // it hit no limit: only the entry whose allowance ran out rests
    const cooldowns = JSON.parse(readFileSync(join(sandbox.data, "cooldowns.json"), "utf8")) as { entries: Record<string, unknown> };
    expect(Object.keys(cooldowns.entries)).toEqual(["limit"]);
    const shown = (await sandbox.run(["sessions", "show", session!])).stdout.split("\n").map((line) => line.replace(/^\d\d:\d\d {2}/, ""));
    expect(shown).toContain(`signin did not take over: it did not take the conversation within 1 s; its screen ends "Press Enter to choose"`);
    expect(shown).toContain("line took the conversation (it showed it as its turn)");
  });

  it("skips one that exits at once, even with status 0", async () => {
    configure(["limit", "quitter", "line"]);
    const terminal = open();
    await reachLimit(terminal);
    const screen = await terminal.waitFor("line agent ready", 20_000);
    expect(screen).toContain(
      `uuldana: quitter did not take over (it exited with status 0 before it took the conversation; its screen ends "This folder is not a project I can work in."); trying the next entry`,
    );
    expect(lineArgs(terminal)[2]).toContain("I answered: please add a test for the lexer");
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    expect(journal().find((event) => event.type === "receiver" && event.entry === "quitter")).toMatchObject({
      took: false,
      reason: "it exited with status 0 before it took the conversation",
      lines: ["This folder is not a project I can work in."],
    });
  });

  it("ends with exit 1 and each entry's reason when no agent takes the conversation", async () => {
    configure(["limit", "signin", "quitter"]);
    const terminal = open();
    await reachLimit(terminal);
    expect((await terminal.exited).exitCode).toBe(1);
    const screen = await terminal.waitFor("the first resting entry returns");
    const at = screen.indexOf("uuldana: no entry can run under the ceiling ask [E_NO_ELIGIBLE_ENTRY]");
    expect(at).toBeGreaterThan(-1);
    expect(screen.slice(at + 1, at + 4)).toEqual([
      `  limit: resting until ${LIMIT_RESET.shown}`,
      `  signin: could not take over: it did not take the conversation within 1 s; its screen ends "Press Enter to choose"`,
      `  quitter: could not take over: it exited with status 0 before it took the conversation; its screen ends "This folder is not a project I can work in."`,
    ]);
  });

  it("gives an agent the user is typing to (signing in, say) its time again from each key", async () => {
    configure(["limit", "signin", "line"], { receiver_seconds: 3 });
    const terminal = open();
    await reachLimit(terminal);
    await terminal.waitFor("Press Enter to choose", 20_000);
    // a key every 0.5 s for 4 s: past the 3 s it would have had without them
    for (let i = 0; i < 8; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      terminal.type("\r");
    }
    expect(terminal.raw).not.toContain("signin did not take over");
    const screen = await terminal.waitFor("line agent ready", 20_000);
    expect(screen.join("\n")).toContain("uuldana: signin did not take over (it did not take the conversation within 3 s");
    terminal.type("/exit\r");
    await terminal.exited;
  });
});
