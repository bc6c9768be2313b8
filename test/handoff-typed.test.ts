import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { EXIT, installAgents } from "./agents.js";
import { bin, handoffPreamble, linkAgent, makeSandbox, standInManifest, waitFor, waitForJournal, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// A chain of two stand-ins whose screens keep only the latest exchange (each turn is drawn on a cleared screen),
// which meet their limits without showing the user's line back: what reaches the next agent of each run is every
// line the user typed, once and in order, with the answers the screens still showed, and the last line typed is
// the request quoted at the top.

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox, ["line"]);
  for (const id of ["r1", "r2"]) {
    linkAgent(sandbox, id, "redraw-agent.mjs");
    sandbox.write(`config/providers/${id}.json`, standInManifest(id, { exit: EXIT, chrome: ["^redraw agent \\w+( ready)?$"] }));
  }
  // r1 meets its limit at the user's third line, under the second exchange; r2 (its first turn the handoff) at the
  // user's second line, on a screen cleared of all before it
  sandbox.write("config/config.json", {
    providers: [
      { id: "r1", env: { REDRAW_NAME: "r1", REDRAW_LIMIT_AT: "3" } },
      { id: "r2", env: { REDRAW_NAME: "r2", REDRAW_LIMIT_AT: "3", REDRAW_AT_LIMIT: "clear" } },
      "line",
    ],
    auto_detect: false,
    quiet_seconds: 0.3,
    dismiss_seconds: 5,
  });
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

const ASK = [
  "Which colour is the lighthouse on the north pier?",
  "And how tall is the lighthouse on the north pier today?",
  "When was it built?",
  "Is the light still in use?",
  "Who keeps it?",
];
const MARK = "(the user's last request, quoted at the top)";
const R1_NONE = "(Stand-in r1's answer to this was not on its screen)";
const R2_NONE = "(Stand-in r2's answer to this was not on its screen)";
// r1's part: the first line scrolled away with its answer, the second shown back cut short and answered, the third
// never shown (its answer was the limit)
const R1_PART = [
  "--- Stand-in r1 (r1), as its screen showed it ---",
  `User: ${ASK[0]}`,
  R1_NONE,
  "",
  `› ${ASK[1].slice(0, 40)}…`,
  `● r1 answers 2: noted "${ASK[1].slice(0, 24)}".`,
  "",
];

// Waits until the session's journal holds an event the test looks for.
const journaled = (what: (event: Record<string, unknown>) => boolean): Promise<void> => waitForJournal(sandbox.data, what, "the journal's line");

describe("a handoff from screens that keep only the latest exchange", () => {
  it("carries every line the user typed once, in order, with the answers shown, and quotes the last one typed", async () => {
    const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, TZ: "Europe/Berlin" }, cols: 110, rows: 30 });
    terminals.push(terminal);
    const drawn = (text: string): Promise<void> => waitFor(() => terminal.raw.includes(text), text, 20_000);
    await drawn("redraw agent r1 ready");
    for (const [index, line] of ASK.slice(0, 2).entries()) {
      terminal.type(`${line}\r`);
      await drawn(`r1 answers ${index + 1}`);
    }
    terminal.type(`${ASK[2]}\r`);
    await drawn("r2 answers 1");
    // r2 showed the handoff as its turn before the user's line clears it away
    await journaled((event) => event.type === "receiver" && event.entry === "r2" && event.took === true);
    terminal.type(`${ASK[3]}\r`);
    await drawn("r2 answers 2");
    terminal.type(`${ASK[4]}\r`);
    await drawn("line agent ready");
    await terminal.settle();
    const args = JSON.parse(/line agent ready; args: (\[.*\]); LEVEL_ENV/.exec(terminal.raw.replace(/\r?\n/g, " "))![1]!) as string[];
    terminal.type("/exit\r");
    await terminal.exited;
    const session = readdirSync(join(sandbox.data, "sessions"))[0]!;
    expect(readFileSync(join(sandbox.data, "sessions", session, "prompt-1.txt"), "utf8")).toBe(
      [handoffPreamble("Stand-in r1 (r1)", ASK[2]), "", ...R1_PART, `User: ${MARK}`, R1_NONE, ""].join("\n"),
    );
    expect(args.at(-1)).toBe(
      [
        handoffPreamble("Stand-in r2 (r2)", ASK[4], ["Stand-in r1 (r1)"]),
        "",
        ...R1_PART,
        `User: ${ASK[2]}`,
        R1_NONE,
        "",
        "--- Stand-in r2 (r2), as its screen showed it ---",
        `User: ${ASK[3]}`,
        R2_NONE,
        "",
        `User: ${MARK}`,
        R2_NONE,
        "",
      ].join("\n"),
    );
  });
});
