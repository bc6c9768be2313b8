import { readdirSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { installAgents } from "./agents.js";
import { bin, makeSandbox, sessionJournals, standInManifest, waitFor, type JournalLine, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// A run's states as the user meets them in a real terminal: keys typed while uuldana stops an agent.

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox, ["line"]);
  // a limit stand-in that takes its time to stop: its exit key is one it ignores, so the ladder waits, then hangs up
  sandbox.write(
    "config/providers/limit.json",
    standInManifest("limit", { exit: { keys: ["{escape}"], wait_seconds: 2, signals: ["SIGHUP", "SIGTERM"], signal_wait_seconds: 1 } }),
  );
  sandbox.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, quiet_seconds: 0.3 });
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

function open(): TestTerminal {
  const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, TZ: "Europe/Berlin", LIMIT_MODE: "answer" }, cols: 220 });
  terminals.push(terminal);
  return terminal;
}

function journal(): JournalLine[] {
  return sessionJournals(sandbox.data)[0] ?? [];
}

describe("keys typed while uuldana stops an agent", () => {
  it("hands whole lines to the agent that takes over and journals the rest as not delivered", async () => {
    const terminal = open();
    await terminal.waitFor("limit agent ready");
    terminal.type("please add a test for the lexer\r");
    // the limit is settled and the stop begins: the user goes on typing
    await waitFor(() => journal().some((event) => event.type === "limit"), "the limit", 20_000);
    terminal.type("and then tidy the parser\r");
    terminal.type("half a th");
    await terminal.waitFor("line agent ready", 20_000);
    const prompt = JSON.parse(/line agent ready; args: (\[.*\]); LEVEL_ENV/.exec(terminal.raw.replace(/\r?\n/g, " "))![1]!)[2] as string;
    expect(prompt).toContain("Continue with the user's last request, quoted here whole:\n\n> and then tidy the parser\n");
    expect(prompt).toContain("I answered: please add a test for the lexer");
    expect(prompt).not.toContain("half a th");
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    const said = journal().filter((event) => event.type === "user" || event.type === "keys-not-delivered");
    expect(said.map(({ type, entry, text, held, reason }) => ({ type, entry, text, held, reason }))).toEqual([
      { type: "user", entry: "limit", text: "please add a test for the lexer", held: undefined, reason: undefined },
      { type: "user", entry: "limit", text: "and then tidy the parser", held: true, reason: undefined },
      { type: "keys-not-delivered", entry: "limit", text: "half a th", held: undefined, reason: "typed without Enter while limit was being stopped" },
      { type: "user", entry: "line", text: "/exit", held: undefined, reason: undefined },
    ]);
    const shown = (await sandbox.run(["sessions", "show", sessionIdOf()])).stdout;
    expect(shown).toContain("you (to limit, typed while it was being stopped: handed to the next agent): and then tidy the parser\n");
    expect(shown).toContain("your keys to limit were not delivered (typed without Enter while limit was being stopped): half a th\n");
  });
});

// The one session the test ran.
function sessionIdOf(): string {
  return readdirSync(join(sandbox.data, "sessions"))[0]!;
}
