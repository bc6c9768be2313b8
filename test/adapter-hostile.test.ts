import { readFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { EXIT, installAgents } from "./agents.js";
import { bin, fixtures, linkAgent, makeSandbox, sessionJournals, standInManifest, uuldanaLines, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// Adapters that loop, never settle, exit or hang, run for real in a pseudo-terminal: each is turned off with one line,
// the session goes on with the general reader (the quirk agent's limit banner still moves the work to the line agent),
// keys keep reaching the agents, uuldana ends with the agent's exit code and leaves the terminal as it found it.

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox, ["line"]);
  linkAgent(sandbox, "quirk", "quirk-agent.mjs");
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

// The quirk stand-in as a drop-in whose adapter is the fixture, first in the session, the line agent after it.
function dropIn(fixture: string): void {
  sandbox.write("config/providers/quirk.json", standInManifest("quirk", { exit: EXIT, adapter: "./quirk.mjs" }));
  sandbox.write("config/providers/quirk.mjs", readFileSync(join(fixtures, "adapters", fixture), "utf8"));
  sandbox.write("config/config.json", { providers: ["quirk", "line"], auto_detect: false, quiet_seconds: 0.3, dismiss_seconds: 1.5 });
}

// uuldana run through a shell that prints the terminal settings before it starts and after it ends.
function start(): TestTerminal {
  const terminal = new TestTerminal(
    "/bin/sh",
    ["-c", `stty -g; "${process.execPath}" "${bin}" run; code=$?; echo "settings after: $(stty -g)"; exit $code`],
    { cwd: sandbox.project, env: { ...sandbox.env, QUIRK_MODE: "banner" }, cols: 220 },
  );
  terminals.push(terminal);
  return terminal;
}



// A whole session: the quirk agent answers, shows its limit banner and the work moves to the line agent, which answers
// a typed line and exits with code 7. What uuldana said, its exit code and the terminal settings before and after.
async function session(fixture: string): Promise<{ lines: string[]; code: number | null; before: string; after: string }> {
  dropIn(fixture);
  const terminal = start();
  const before = (await terminal.waitFor("quirk agent ready", 20_000))[0]!;
  terminal.type("go on\r");
  await terminal.waitFor("I looked at it: go on.");
  await terminal.waitFor("line agent ready", 20_000);
  terminal.type("hello\r");
  await terminal.waitFor("you said: hello");
  terminal.type("exit 7\r");
  const { exitCode } = await terminal.exited;
  const screen = await terminal.waitFor("settings after: ");
  const after = screen.find((line) => line.startsWith("settings after: "))!.slice("settings after: ".length);
  return { lines: uuldanaLines(terminal.raw), code: exitCode, before, after };
}

const LOAD_LINE = (what: string): string => `uuldana: the adapter of provider "quirk" will not load: ${what}; uuldana carries on without it`;

describe("an adapter that cannot be run", () => {
  it.each([
    ["loops at its top level", "loop-at-import.mjs", LOAD_LINE("it was still loading after 3 s (a loop, or a top-level await that never settles)"), { failure: "load" }],
    ["awaits forever at its top level", "await-forever.mjs", LOAD_LINE("it was still loading after 3 s (a loop, or a top-level await that never settles)"), { failure: "load" }],
    ["throws at its top level", "throw-at-load.mjs", LOAD_LINE("loading it threw an error (no config for quirk)"), { failure: "load" }],
    ["calls process.exit(0) as it loads", "exit-at-load.mjs", LOAD_LINE("its top level called process.exit(0)"), { failure: "load" }],
    [
      "loops in its classify hook",
      "loop-in-classify.mjs",
      'uuldana: provider "quirk": its classify hook did not return (the budget is 50 ms); uuldana turned its adapter off and carries on without it',
      { hook: "classify", failure: "hung" },
    ],
    [
      "calls process.exit(0) in its classify hook",
      "exit-in-hook.mjs",
      'uuldana: provider "quirk": its classify hook called process.exit(0); uuldana turned its adapter off and carries on without it',
      { hook: "classify", failure: "exited", message: "called process.exit(0)" },
    ],
  ])("that %s is turned off with one line, and the session goes on", async (_, fixture, line, event) => {
    const { lines, code, before, after } = await session(fixture);
    expect(lines.filter((said) => said.includes("adapter"))).toEqual([line]);
    // the general reader read the banner: the work moved on, and the line agent's exit code is uuldana's
    expect(lines).toContainEqual(expect.stringMatching(/^uuldana: quirk's daily limit is gone; it rests until .* UTC; continuing with line /));
    expect(code).toBe(7);
    expect(after).toBe(before);
    expect(sessionJournals(sandbox.data)[0]!.filter((entry) => entry.type === "hook-off")).toEqual([expect.objectContaining({ entry: "quirk", provider: "quirk", ...event })]);
    expect(sessionJournals(sandbox.data)[0]!.find((entry) => entry.type === "limit")).toMatchObject({ entry: "quirk", kind: "daily" });
  });
});
