import { existsSync, readdirSync, rmSync, statSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";

import { bin, makeSandbox, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

// The lines every demo shows, whatever the terminal: the failover and the session's history.
function expectFailover(text: string): void {
  const lines = text.split(/\r?\n/).map((line) => line.trimEnd());
  const banner = lines.find((line) => line.includes("You've hit your weekly limit"));
  const [, month, day] = /resets (\w{3}) (\d+), 9am \(UTC\)$/.exec(banner ?? "") ?? [];
  const year = new Date().getUTCFullYear() + (month === "Jan" && new Date().getUTCMonth() === 11 ? 1 : 0);
  const until = `${year}-${String(MONTHS.indexOf(month!) + 1).padStart(2, "0")}-${day!.padStart(2, "0")} 09:01 UTC`;
  expect(lines).toContain("uuldana: starting demo-first (First demo agent 1.0.0) at ask · ctrl-] opens uuldana's prompt");
  expect(lines).toContain("› What happens when an agent's usage allowance runs out?");
  expect(lines).toContain(
    `uuldana: demo-first's weekly limit is gone; it rests until ${until}; continuing with demo-second (Second demo agent 1.0.0) at ask with the conversation so far · ctrl-] opens uuldana's prompt`,
  );
  // what the second agent received: the question and the first agent's answer, not the limit menu
  const received = lines.filter((line) => line.startsWith("  │ "));
  expect(received).toContain("  │ › What happens when an agent's usage allowance runs out?");
  expect(received.some((line) => line.startsWith("  │ ● uuldana watches the agent's screen."))).toBe(true);
  expect(received.some((line) => /weekly limit|What do you want to do|Goodbye/.test(line))).toBe(false);
  expect(lines).toContain("uuldana: demo-second (Second demo agent) exited with code 0 after 2s");
  const history = lines.slice(lines.findIndex((line) => line.startsWith("$ uuldana sessions show ")));
  expect(history[0]).toMatch(/^\$ uuldana sessions show [0-9a-z]+$/);
  expect(history[1]).toMatch(/^session [0-9a-z]+ · started \d{4}-\d\d-\d\d \d\d:\d\d UTC · \S+ · ended \(exit 0\)$/);
  expect(history.slice(2, 6).map((line) => line.slice(7))).toEqual([
    "demo-first started at ask",
    "you (to demo-first): What happens when an agent's usage allowance runs out?",
    `demo-first: usage limit (weekly, inferred): You've hit your weekly limit · resets ${month} ${day}, 9am (UTC)`,
    `demo-first rests until ${until}`,
  ]);
  expect(history).toContain("The demo's temporary folder has been removed (uuldana demo --keep keeps it).");
}

describe("uuldana demo", () => {
  it("shows a failover from start to end without a terminal, and leaves the user's folders alone", async () => {
    sandbox = makeSandbox();
    const run = await sandbox.run(["demo"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(/\x1b/);
    expectFailover(run.stdout);
    const folder = /config, data and cache in (\S+)/.exec(run.stdout)![1]!;
    expect(existsSync(folder)).toBe(false);
    for (const dir of [sandbox.config, sandbox.data, sandbox.cache]) expect(readdirSync(dir)).toEqual([]);
  });

  it("shows the same in a terminal, and leaves it as it was", async () => {
    sandbox = makeSandbox();
    const script = `stty -g; "${process.execPath}" "${bin}" demo; echo "exit $?"; stty -g`;
    const terminal = new TestTerminal("/bin/sh", ["-c", script], { cwd: sandbox.project, env: sandbox.env, cols: 320, rows: 60 });
    await terminal.exited;
    await terminal.settle();
    const text = terminal.text();
    expect(text).toContain("\nexit 0\n");
    expectFailover(text);
    const settings = text.split("\n").filter((line) => /^[0-9a-f]+(:[0-9a-f]+){10,}$/.test(line));
    expect(settings).toHaveLength(2);
    expect(settings[1]).toBe(settings[0]);
  });

  it("keeps its folder with --keep, private to the user", async () => {
    sandbox = makeSandbox();
    const run = await sandbox.run(["demo", "--keep"]);
    expect(run.code).toBe(0);
    const folder = /config, data and cache in (\S+)/.exec(run.stdout)![1]!;
    expect(run.stdout).toContain(`The demo's files are kept in ${folder}.`);
    expect(statSync(`${folder}/data/sessions`).mode & 0o777).toBe(0o700);
    const [session] = readdirSync(`${folder}/data/sessions`);
    expect(statSync(`${folder}/data/sessions/${session}/journal.jsonl`).mode & 0o777).toBe(0o600);
    rmSync(folder, { recursive: true, force: true });
  });

  it("stops gracefully on Ctrl+C, and says the demo was stopped", async () => {
    sandbox = makeSandbox();
    const terminal = new TestTerminal(process.execPath, [bin, "demo"], { cwd: sandbox.project, env: sandbox.env, cols: 320, rows: 60 });
    await terminal.waitFor("Ask me anything.");
    terminal.type("\x03");
    const exit = await terminal.exited;
    await terminal.settle();
    const lines = terminal.text().split("\n");
    expect(exit.exitCode).toBe(130);
    expect(lines.some((line) => /^uuldana: stopped demo-first \(First demo agent\) with its exit keys after \ds$/.test(line))).toBe(true);
    expect(lines).toContain("uuldana: the demo was stopped before the failover");
  });
});
