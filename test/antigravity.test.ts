import { readFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { formatInstant } from "../core/session/eligibility.js";
import { EXIT, installAgents } from "./agents.js";
import { bin, linkAgent, makeSandbox, root, sessionJournals, uuldanaLines, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// Antigravity CLI is closed source and not on npm: a stand-in named agy draws its wording, under the built-in
// manifest with the level and prompt a test needs (a drop-in of the same id replaces the built-in).

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];
// "Refreshes in 6 days and 18 hours", and the minute of margin uuldana adds to every reset it reads
const REFRESH_MS = (6 * 24 + 18) * 3_600_000 + 60_000;

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox);
  linkAgent(sandbox, "agy", "quota-agent.mjs");
  const builtIn = JSON.parse(readFileSync(join(root, "manifests", "antigravity.json"), "utf8")) as Record<string, unknown>;
  delete builtIn.$schema;
  sandbox.write("config/providers/antigravity.json", { ...builtIn, prompt: { mode: "argv" }, levels: { ask: { args: ["--ask"] } }, exit: EXIT });
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

function open(args: string[], env: Record<string, string> = {}): TestTerminal {
  const terminal = new TestTerminal(process.execPath, [bin, ...args], { cwd: sandbox.project, env: { ...sandbox.env, ...env }, cols: 220 });
  terminals.push(terminal);
  return terminal;
}

// Runs the stand-in to its quota line and on to the line agent; returns what uuldana said and the session's journal.
async function pastTheQuota(): Promise<{ said: string[]; journal: Record<string, unknown>[]; before: number; after: number }> {
  const terminal = open(["run"]);
  await terminal.waitFor("quota agent ready");
  const before = Date.now();
  terminal.type("please tidy the lexer\r");
  await terminal.waitFor("line agent ready", 20_000);
  const after = Date.now();
  terminal.type("/exit\r");
  expect((await terminal.exited).exitCode).toBe(0);
  return { said: uuldanaLines(terminal.raw), journal: sessionJournals(sandbox.data)[0]!, before, after };
}

describe("Antigravity CLI's weekly quota", () => {
  it("fails over to the next entry, resting antigravity until the refresh its line names, read from the instant it was drawn", async () => {
    sandbox.write("config/config.json", { providers: ["antigravity", "line"], auto_detect: false, quiet_seconds: 0.3 });
    const { said, journal, before, after } = await pastTheQuota();
    const limit = journal.find((event) => event.type === "limit")!;
    // the general reader names it a model's limit ("Model quota"); with no model named, the whole entry rests
    expect(limit).toMatchObject({ entry: "antigravity", source: "inferred", kind: "per-model", text: "Model quota limit exceeded. Refreshes in 6 days and 18 hours." });
    const reset = Date.parse(limit.reset_at as string);
    // "in 6 days and 18 hours" counts from the moment the line was read, between the user's line and the handoff
    expect(reset).toBeGreaterThanOrEqual(before + REFRESH_MS);
    expect(reset).toBeLessThanOrEqual(after + REFRESH_MS);
    const rest = JSON.parse(readFileSync(join(sandbox.data, "cooldowns.json"), "utf8")) as { entries: Record<string, { until: string }> };
    expect(rest.entries.antigravity!.until).toBe(limit.reset_at);
    expect(said).toContain(
      `uuldana: antigravity's per-model limit is gone; it rests until ${formatInstant(new Date(reset))}; continuing with line (Stand-in line 1.0.0) at ask with the conversation so far · ctrl-] opens uuldana's prompt`,
    );
  });

  it("never moves the session to another Antigravity entry (a second account) by itself: that entry is skipped with the reason", async () => {
    sandbox.write("config/config.json", {
      providers: ["antigravity", { id: "antigravity", name: "agy-second", env: { AGY_ACCOUNT: "second" } }, "line"],
      auto_detect: false,
      quiet_seconds: 0.3,
    });
    const { said, journal } = await pastTheQuota();
    const skipped = journal.filter((event) => event.type === "skipped").map((event) => [event.entry, event.reasons]);
    expect(skipped).toEqual([
      [
        "agy-second",
        [
          "not moved to from antigravity by itself: it is another Antigravity CLI account, and Antigravity CLI's terms do not allow automated rotation between accounts (start it yourself: uuldana run --provider agy-second)",
        ],
      ],
    ]);
    expect(said.some((line) => line.includes("continuing with line (Stand-in line 1.0.0)"))).toBe(true);
    expect(journal.filter((event) => event.type === "run-start").map((event) => event.entry)).toEqual(["antigravity", "line"]);
  });

  it("starts the second Antigravity entry when the user names it", async () => {
    sandbox.write("config/config.json", { providers: ["antigravity", { id: "antigravity", name: "agy-second" }, "line"], auto_detect: false });
    const terminal = open(["run", "--provider", "agy-second"]);
    await terminal.waitFor("quota agent ready");
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    expect(sessionJournals(sandbox.data)[0]!.filter((event) => event.type === "run-start").map((event) => event.entry)).toEqual(["agy-second"]);
  });
});
