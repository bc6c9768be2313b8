import { readdirSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { EXIT, installAgents } from "./agents.js";
import { bin, linkAgent, makeSandbox, sessionJournals, standInManifest, waitFor, type JournalLine, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// A run's states as the user meets them in a real terminal: a receiver at a sign-in screen or a question, keys typed
// while uuldana stops an agent.

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

function open(env: Record<string, string> = {}): TestTerminal {
  const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, TZ: "Europe/Berlin", LIMIT_MODE: "answer", ...env }, cols: 220 });
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

// The sign-in stand-in: its manifest names the line its menu shows, and what signs it in.
function addSignIn(): void {
  linkAgent(sandbox, "signin", "receiver-agent.mjs");
  sandbox.write("config/providers/signin.json", standInManifest("signin", { exit: EXIT, sign_in: { screen: ["^Sign in to continue:$"], command: "signin login" } }));
}

// The prompt the line stand-in was started with.
function lineArgs(terminal: TestTerminal): string[] {
  return JSON.parse(/line agent ready; args: (\[.*\]); LEVEL_ENV/.exec(terminal.raw.replace(/\r?\n/g, " "))![1]!) as string[];
}

describe("a receiver at a sign-in screen", () => {
  it("is left at the first screen that asks, long before receiver_seconds, not rested, and the next entry gets the conversation", async () => {
    addSignIn();
    sandbox.write("config/providers/limit.json", standInManifest("limit", { exit: EXIT }));
    sandbox.write("config/config.json", { providers: ["limit", "signin", "line"], auto_detect: false, quiet_seconds: 0.3, receiver_seconds: 600 });
    const terminal = open();
    await terminal.waitFor("limit agent ready");
    terminal.type("please add a test for the lexer\r");
    const screen = await terminal.waitFor("line agent ready", 20_000);
    expect(screen).toContain(`uuldana: signin did not take over (it asks to sign in: run "signin login"; its screen says "Sign in to continue:"); trying the next entry`);
    expect(lineArgs(terminal)[2]).toContain("I answered: please add a test for the lexer");
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    const receiver = journal().find((event) => event.type === "receiver" && event.entry === "signin");
    expect(receiver).toMatchObject({ took: false, reason: 'it asks to sign in: run "signin login"', sign_in: true });
    expect(journal().filter((event) => event.type === "cooldown").map((event) => event.entry)).toEqual(["limit"]);
    const list = JSON.parse((await sandbox.run(["providers", "list", "--json"])).stdout) as { entry: string; resting_until: string | null }[];
    expect(list.find((row) => row.entry === "signin")?.resting_until).toBeNull();
  });

  it("is not tried again in the same session: the next failover skips it, saying why", async () => {
    addSignIn();
    sandbox.write("config/providers/limit.json", standInManifest("limit", { exit: EXIT }));
    sandbox.write("config/config.json", {
      providers: [{ id: "limit", name: "first" }, "signin", { id: "limit", name: "second" }, "line"],
      auto_detect: false,
      quiet_seconds: 0.3,
      receiver_seconds: 600,
    });
    const terminal = open();
    await terminal.waitFor("limit agent ready");
    terminal.type("please add a test for the lexer\r");
    await waitFor(() => journal().some((event) => event.type === "run-start" && event.entry === "second"), "the second limit entry", 20_000);
    await waitFor(() => (terminal.raw.match(/limit agent ready/g) ?? []).length === 2, "the second limit agent", 20_000);
    terminal.type("and then the parser\r");
    await terminal.waitFor("line agent ready", 20_000);
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    const starts = journal().filter((event) => event.type === "run-start").map((event) => event.entry);
    expect(starts).toEqual(["first", "signin", "second", "line"]);
    expect(journal().filter((event) => event.type === "skipped" && event.entry === "signin").map((event) => event.reasons)).toEqual([
      ['it asks to sign in: run "signin login" (it asked at its last start in this session)'],
    ]);
  });
});

describe("an agent that seemed to take the conversation, then asks to sign in", () => {
  it("is left like a receiver at its sign-in screen, and the next entry gets the conversation", async () => {
    linkAgent(sandbox, "latecomer", "receiver-agent.mjs");
    sandbox.write("config/providers/latecomer.json", standInManifest("latecomer", { exit: EXIT, sign_in: { screen: ["^  ⎿  Not logged in · Please run /login$"], command: "latecomer login" } }));
    sandbox.write("config/providers/limit.json", standInManifest("limit", { exit: EXIT }));
    sandbox.write("config/config.json", { providers: ["limit", "latecomer", "line"], auto_detect: false, quiet_seconds: 0.3, receiver_seconds: 600 });
    const terminal = open();
    await terminal.waitFor("limit agent ready");
    terminal.type("please add a test for the lexer\r");
    const screen = await terminal.waitFor("line agent ready", 20_000);
    expect(screen).toContain(`uuldana: latecomer did not take over (it asks to sign in: run "latecomer login"; its screen says "⎿ Not logged in · Please run /login"); trying the next entry`);
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    expect(journal().filter((event) => event.type === "receiver").map((event) => [event.entry, event.took])).toEqual([["latecomer", true], ["line", true]]);
    expect(journal().find((event) => event.type === "state")).toMatchObject({ entry: "latecomer", from: "working", to: "stopping", why: "it asks to sign in after all" });
  });
});

describe("a first agent at its sign-in screen", () => {
  it("is left to the user, in the signing-in state, and the title says so", async () => {
    linkAgent(sandbox, "signin", "receiver-agent.mjs");
    sandbox.write("config/providers/signin.json", standInManifest("signin", { exit: EXIT, sign_in: { screen: ["^Sign in to continue:$"], command: "signin login" } }));
    sandbox.write("config/config.json", { providers: ["signin", "line"], auto_detect: false, quiet_seconds: 0.3 });
    const terminal = open();
    await terminal.waitFor("Press Enter to choose");
    await waitFor(() => terminal.title === "uuldana · signin · ask · waiting for its sign-in", "the title", 5000);
    expect(journal().find((event) => event.type === "state")).toMatchObject({ entry: "signin", from: "working", to: "signing-in", why: "it asks the user to sign in" });
    terminal.kill();
  });
});

describe("a receiver whose screen asks the user a question first", () => {
  it("waits for the user, says so in the title and the journal, and its keys give it its time again", async () => {
    linkAgent(sandbox, "signin", "receiver-agent.mjs");
    // the same menu, read as a question the agent needs answered (as a trust dialog is)
    sandbox.write("config/providers/signin.json", standInManifest("signin", { exit: EXIT, asks: ["^Sign in to continue:$"] }));
    sandbox.write("config/providers/limit.json", standInManifest("limit", { exit: EXIT }));
    sandbox.write("config/config.json", { providers: ["limit", "signin", "line"], auto_detect: false, quiet_seconds: 0.3, receiver_seconds: 3 });
    const terminal = open();
    await terminal.waitFor("limit agent ready");
    terminal.type("please add a test for the lexer\r");
    await waitFor(() => journal().some((event) => event.type === "state" && event.entry === "signin"), "the question", 20_000);
    expect(journal().find((event) => event.type === "state")).toMatchObject({ entry: "signin", from: "receiving", to: "asking", why: "it asks the user a question first" });
    await waitFor(() => terminal.title === "uuldana · signin · ask · waiting on its question", "the title", 5000);
    // the user answers: the time starts again, and the agent still does not take over after it
    terminal.type("\r");
    await terminal.waitFor("line agent ready", 20_000);
    expect(terminal.raw).toContain(`uuldana: signin did not take over (it did not take the conversation within 3 s; its screen ends "Opening your browser..."); trying the next entry`);
    terminal.type("/exit\r");
    await terminal.exited;
  });
});
