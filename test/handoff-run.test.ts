import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { EXIT, installAgents } from "./agents.js";
import { bin, LIMIT_RESET, linkAgent, makeSandbox, standInManifest, handoffPreamble, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox, ["line"]);
  linkAgent(sandbox, "plan", "plan-agent.mjs");
  sandbox.write("config/providers/plan.json", standInManifest("plan", { exit: EXIT }));
  sandbox.write("config/config.json", { providers: ["plan", "line"], auto_detect: false, quiet_seconds: 0.3, dismiss_seconds: 5 });
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

const PREAMBLE = handoffPreamble("Stand-in plan (plan)", "please split the parser");

// Runs the plan stand-in to its limit with the user's one request, and returns the prompt the next agent was started with.
async function handedOn(mode: string): Promise<string> {
  const terminal = new TestTerminal(process.execPath, [bin, "run"], {
    cwd: sandbox.project,
    env: { ...sandbox.env, TZ: "Europe/Berlin", PLAN_MODE: mode },
    cols: 220,
  });
  terminals.push(terminal);
  await terminal.waitFor("plan agent ready");
  terminal.type("please split the parser\r");
  await terminal.waitFor("line agent ready", 20_000);
  const args = JSON.parse(/line agent ready; args: (\[.*\]); LEVEL_ENV/.exec(terminal.raw.replace(/\r?\n/g, " "))![1]!) as string[];
  terminal.type("/exit\r");
  await terminal.exited;
  expect(args.slice(0, 2)).toEqual(["--base", "--ask"]);
  return args[2]!;
}

// The prompt the next agent gets from the plan agent: its greeting, the request and the plan's first steps, then
// what each mode drew last before the banner.
const planHandedOn = (last: string): string =>
  [PREAMBLE, "", "--- Stand-in plan (plan), as its screen showed it ---", "plan agent ready", "(the user's last request, quoted at the top)", "Here is my plan:", "  1. read the parser", "  2. split it into three functions", last, ""].join("\n");

describe("the handoff keeps every word the agent drew before its limit message", () => {
  it("carries a plan drawn in the same write as the banner, and leaves out the banner and the limit screen", async () => {
    const prompt = await handedOn("plain");
    expect(prompt).toBe(planHandedOn("  3. add a test for each"));
    // the prompt file beside the journal is the very prompt, and the limit is journaled as the message alone
    const folder = join(sandbox.data, "sessions", readdirSync(join(sandbox.data, "sessions"))[0]!);
    expect(readFileSync(join(folder, "prompt-1.txt"), "utf8")).toBe(prompt);
    const limit = readFileSync(join(folder, "journal.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line)).find((event) => event.type === "limit");
    expect(limit.text).toBe(LIMIT_RESET.message);
  });

  it("carries the words drawn between escape sequences, even on the banner's own line", async () => {
    const prompt = await handedOn("styled");
    expect(prompt).toBe(planHandedOn("Step one is done."));
  });
});
