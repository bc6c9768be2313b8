import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";

import { afterEach, describe, expect, it } from "vitest";

import { bin, makeSandbox, root, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const readme = readFileSync(join(root, "README.md"), "utf8");

// What differs from one demo to the next (its folder, session id, clock and the reset three days ahead), masked.
function mask(line: string): string {
  return line
    .replace(/\/tmp\/uuldana-demo-\w+/g, "FOLDER")
    // a session id: six base-36 characters of seconds since 2025 (a digit first until 2044), four random ones
    .replace(/\b[0-9][0-9a-z]{9}\b/g, "SESSION")
    .replace(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/g, "INSTANT")
    .replace(/^\d\d:\d\d {2}/, "HH:MM  ")
    .replace(/resets [A-Z][a-z]{2} \d{1,2}, 9am/, "resets DAY, 9am")
    .trimEnd();
}

// The lines every demo shows, whatever the terminal: the failover, what the second agent received, the history.
function expectFailover(text: string): void {
  const lines = text.split(/\r?\n/).map((line) => line.trimEnd());
  const banner = lines.find((line) => line.includes("You've hit your weekly limit"));
  expect(banner, "the first agent's limit banner").toBeDefined();
  const [, month, day] = /resets (\w{3}) (\d+), 9am \(UTC\)$/.exec(banner!)!;
  const year = new Date().getUTCFullYear() + (month === "Jan" && new Date().getUTCMonth() === 11 ? 1 : 0);
  const until = `${year}-${String(MONTHS.indexOf(month!) + 1).padStart(2, "0")}-${day!.padStart(2, "0")} 09:01 UTC`;
  expect(lines).toContain("uuldana: starting demo-first (First demo agent 1.0.0) at ask");
  expect(lines).toContain("› What happens when an agent's usage allowance runs out?");
  expect(lines).toContain(`uuldana: demo-first's weekly limit is gone; it rests until ${until}; continuing with demo-second (Second demo agent 1.0.0) at ask with the conversation so far`);
  // what the second agent received: the question and the first agent's answer, not the limit menu
  const received = lines.filter((line) => line.startsWith("  │ "));
  expect(received).toContain("  │ > What happens when an agent's usage allowance runs out?");
  expect(received).toContain("  │ (the user's last request, quoted at the top)");
  expect(received.some((line) => line.includes("First demo agent · ask mode"))).toBe(false);
  expect(lines).toContain("● I have the conversation. You asked: What happens when an agent's usage allowance runs out? Picking up where the first agent stopped.");
  expect(received.some((line) => line.startsWith("  │ ● uuldana watches the agent's screen."))).toBe(true);
  expect(received.some((line) => /weekly limit|What do you want to do|Goodbye/.test(line))).toBe(false);
  expect(lines.some((line) => /^uuldana: demo-second \(Second demo agent\) exited with code 0 after \d+s$/.test(line))).toBe(true);
  const history = lines.slice(lines.findIndex((line) => line.startsWith("$ uuldana sessions show "))).map(mask);
  expect(history.slice(0, history.indexOf("") + 2)).toEqual([
    "$ uuldana sessions show SESSION",
    "session SESSION · started INSTANT · FOLDER/project · ended (exit 0)",
    "HH:MM  demo-first started at ask",
    "HH:MM  you (to demo-first): What happens when an agent's usage allowance runs out?",
    "HH:MM  demo-first: usage limit (weekly, inferred): You've hit your weekly limit · resets DAY, 9am (UTC)",
    "HH:MM  demo-first rests until INSTANT",
    "HH:MM  demo-first's conversation, from its screen: FOLDER/data/sessions/SESSION/conversation-1.txt",
    "HH:MM  demo-first ended (stopped by keys), exit 0",
    "HH:MM  demo-second started at ask, with the conversation so far",
    "HH:MM  demo-second took the conversation (it showed it as its turn)",
    "HH:MM  you (to demo-second): /exit",
    "HH:MM  demo-second's conversation, from its screen: FOLDER/data/sessions/SESSION/conversation-2.txt",
    "HH:MM  demo-second ended, exit 0",
    "HH:MM  session ended, exit 0",
    "",
    "The demo's temporary folder, with the files named above, has been removed (uuldana demo --keep keeps it).",
  ]);
}

// The README's excerpt of the demo, in order: "…" stands for lines left out, a line ending in " …" for its start.
function expectReadmeExcerpt(text: string): void {
  const excerpt = /The first command installs[\s\S]*?```text\n([\s\S]*?)```/.exec(readme)![1]!.trimEnd().split("\n").map(mask);
  const shown = text.split(/\r?\n/).map(mask);
  let at = shown.findIndex((line) => line === excerpt[0]);
  expect(at, `the demo shows "${excerpt[0]}"`).toBeGreaterThanOrEqual(0);
  let gap = false;
  for (const line of excerpt) {
    if (line === "…") {
      gap = true;
      continue;
    }
    const fits = (candidate: string): boolean => (line.endsWith(" …") ? candidate.startsWith(line.slice(0, -2)) : candidate === line);
    const found = gap ? shown.findIndex((candidate, i) => i >= at && fits(candidate)) : fits(shown[at] ?? "") ? at : -1;
    expect(found, `the README's demo line "${line}" is not where the demo shows it`).toBeGreaterThanOrEqual(0);
    at = found + 1;
    gap = false;
  }
}

// Starts the demo in a terminal, presses Ctrl+C once the text is on screen, and returns how it ended and what it showed.
async function pressCtrlC(when: string): Promise<{ exit: { exitCode: number }; lines: string[] }> {
  sandbox = makeSandbox();
  const terminal = new TestTerminal(process.execPath, [bin, "demo"], { cwd: sandbox.project, env: sandbox.env, cols: 320, rows: 60 });
  await terminal.waitFor(when);
  terminal.type("\x03");
  const exit = await terminal.exited;
  await terminal.settle();
  return { exit, lines: terminal.text().split("\n") };
}

describe("uuldana demo", () => {
  it("shows a failover from start to end without a terminal, and leaves the user's folders alone", async () => {
    sandbox = makeSandbox();
    // uuldana on PATH, as the Quick start leaves it
    sandbox.write("bin/uuldana", `#!/bin/sh\nexec "${process.execPath}" "${bin}" "$@"\n`, 0o755);
    const run = await sandbox.run(["demo"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(/[\x1b\r]/);
    expectFailover(run.stdout);
    expect(run.stdout.endsWith("\nThat was a failover. Run uuldana run in a project to start your own agents.\n")).toBe(true);
    expectReadmeExcerpt(run.stdout);
    const folder = /config, data and cache in (\S+)/.exec(run.stdout)![1]!;
    expect(existsSync(folder)).toBe(false);
    for (const dir of [sandbox.config, sandbox.data, sandbox.cache]) expect(readdirSync(dir)).toEqual([]);
  });

  it("shows the same in a terminal, and leaves it as it was", async () => {
    sandbox = makeSandbox();
    // the shell waits a moment before it ends: a pseudo-terminal whose process is gone may drop what it had not read
    const script = `stty -g; "${process.execPath}" "${bin}" demo; echo "exit $?"; stty -g; sleep 0.3`;
    // a PATH without uuldana, whatever this machine has linked (CI runs npm link first): only the tools the script uses
    const tools = join(sandbox.dir, "tools");
    mkdirSync(tools);
    for (const tool of ["stty", "sleep"]) symlinkSync(execFileSync("/bin/sh", ["-c", `command -v ${tool}`], { encoding: "utf8" }).trim(), join(tools, tool));
    const env = { ...sandbox.env, PATH: [join(sandbox.dir, "bin"), tools].join(":") };
    const terminal = new TestTerminal("/bin/sh", ["-c", script], { cwd: sandbox.project, env, cols: 320, rows: 60 });
    await terminal.exited;
    await terminal.settle();
    const text = terminal.text();
    expect(text).toContain("\nexit 0\n");
    expectFailover(text);
    // uuldana is not on this PATH: the last lines give the command that puts it there
    const lines = text.split("\n");
    expect(lines.slice(lines.indexOf("exit 0") - 2, lines.indexOf("exit 0"))).toEqual([
      "That was a failover. uuldana is not on your PATH yet: this command puts it there, then run uuldana run in a project to start your own agents:",
      `  cd "${root}" && npm link`,
    ]);
    const settings = text.split("\n").filter((line) => /^[0-9a-f]+(:[0-9a-f]+){10,}$/.test(line));
    expect(settings).toHaveLength(2);
    expect(settings[1]).toBe(settings[0]);
  });

  it("keeps its folder with --keep, private to the user", async () => {
    sandbox = makeSandbox();
    const run = await sandbox.run(["demo", "--keep"]);
    expect(run.code).toBe(0);
    const folder = /config, data and cache in (\S+)/.exec(run.stdout)![1]!;
    expect(run.stdout).toContain(
      `The demo's files are kept in ${folder}. To look around:\n  UULDANA_CONFIG_DIR=${folder}/config UULDANA_DATA_DIR=${folder}/data uuldana sessions\n`,
    );
    expect(statSync(`${folder}/data/sessions`).mode & 0o777).toBe(0o700);
    const [session] = readdirSync(`${folder}/data/sessions`);
    expect(statSync(`${folder}/data/sessions/${session}/journal.jsonl`).mode & 0o777).toBe(0o600);
    rmSync(folder, { recursive: true, force: true });
  });

  it("stops gracefully on Ctrl+C, and says the demo was stopped", async () => {
    const { exit, lines } = await pressCtrlC("Ask me anything.");
    expect(exit.exitCode).toBe(130);
    expect(lines.some((line) => /^uuldana: stopped demo-first \(First demo agent\) with its exit keys after \ds$/.test(line))).toBe(true);
    expect(lines).toContain("uuldana: the demo was stopped before the failover");
  });

  it("stops at once on Ctrl+C before any agent has started", async () => {
    const { exit, lines } = await pressCtrlC("a scripted user types for you");
    expect(exit.exitCode).toBe(130);
    expect(lines).toContain("uuldana: the demo was stopped before the failover");
    expect(lines.some((line) => /^uuldana: (stopped by SIGINT|stopped demo-first \(First demo agent\) with (its exit keys|SIGTERM) after \ds)$/.test(line))).toBe(true);
  });
});

