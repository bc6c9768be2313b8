import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { installAgents } from "./agents.js";
import { bin, fixtures, isAlive, LIMIT_RESET, linkAgent, makeSandbox, sessionJournals, waitFor, waitForJournal, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox, [{ id: "line", args: ["--entry"], env: { ENTRY_ENV: "mine", LEVEL_ENV: "loosened" } }, "screen", "keys", "fast", "dsr", "limit"]);
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

function open(args: string[], options: { env?: Record<string, string>; cols?: number; rows?: number; shell?: boolean } = {}): TestTerminal {
  const env = { ...sandbox.env, USER_ENV: "u", ...options.env };
  // wide enough for a whole "stty -g" line
  const size = { cols: options.cols ?? (options.shell ? 160 : 100), rows: options.rows };
  // through a shell that prints the terminal settings before uuldana starts and after it ends
  const terminal = options.shell
    ? new TestTerminal(
        "/bin/sh",
        ["-c", `stty -g; "${process.execPath}" "${bin}" "$@"; code=$?; echo "settings after: $(stty -g)"; exit $code`, "sh", ...args],
        { cwd: sandbox.project, env, ...size },
      )
    : new TestTerminal(process.execPath, [bin, ...args], { cwd: sandbox.project, env, ...size });
  terminals.push(terminal);
  return terminal;
}

// The arguments the line-mode stand-in says it was started with.
function agentArgs(terminal: TestTerminal): string[] {
  return JSON.parse(/line agent ready; args: (\[.*\]); LEVEL_ENV/.exec(terminal.raw.replace(/\r?\n/g, " "))![1]!) as string[];
}

// Runs the limit stand-in past its weekly-limit banner, leaves it with /exit, and returns the last screen.
async function runPastLimit(): Promise<string[]> {
  const terminal = open(["run"], { env: { TZ: "Europe/Berlin", LIMIT_MODE: "banner" }, cols: 220 });
  await terminal.waitFor("You've hit your weekly limit");
  await new Promise((resolve) => setTimeout(resolve, 1000));
  terminal.type("/exit\r");
  expect((await terminal.exited).exitCode).toBe(0);
  return terminal.waitFor("exited with code 0");
}

// A reset printed as en-GB prints a numeric date ("07/03/2027, 09:00 (Europe/Berlin)"): the first day at least two
// days ahead whose day and month could be read either way, at 9am Berlin time.
function dayFirstReset(from: Date): { text: string; shown: string } {
  const berlin = new Intl.DateTimeFormat("en-US", { timeZone: "Europe/Berlin", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", hourCycle: "h23" });
  const part = (at: Date, type: string): number => Number(berlin.formatToParts(at).find((p) => p.type === type)!.value);
  for (let ahead = 2; ; ahead++) {
    const at = new Date(from.getTime() + ahead * 86_400_000);
    const [year, month, day] = [part(at, "year"), part(at, "month"), part(at, "day")];
    if (day > 12 || day === month) continue;
    // 9am in Berlin is 8am or 7am UTC
    const nine = [8, 7].map((hour) => new Date(Date.UTC(year, month - 1, day, hour))).find((utc) => part(utc, "hour") === 9)!;
    const iso = new Date(nine.getTime() + 60_000).toISOString();
    const two = (n: number): string => String(n).padStart(2, "0");
    return { text: `${two(day)}/${two(month)}/${year}, 09:00 (Europe/Berlin)`, shown: `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` };
  }
}

// The pid of uuldana started by the shell of open(..., { shell: true }).
function uuldanaPid(terminal: TestTerminal): number {
  return Number(spawnSync("pgrep", ["-P", String(terminal.child.pid)], { encoding: "utf8" }).stdout.trim().split("\n")[0]);
}

async function settingsAfter(terminal: TestTerminal): Promise<string> {
  const screen = await terminal.waitFor("settings after: ");
  return screen.find((line) => line.startsWith("settings after: "))!.slice("settings after: ".length);
}

describe("uuldana run", () => {
  it("starts the entry with base, level, entry and agent arguments, and the level's env over the entry's over the user's", async () => {
    const terminal = open(["run", "--provider", "line", "--", "--agent"], { cols: 140 });
    const screen = await terminal.waitFor("line agent ready");
    expect(screen.slice(0, 2)).toEqual([
      "uuldana: starting line (Stand-in line 1.0.0) at ask · ctrl-] opens uuldana's prompt",
      'line agent ready; args: ["--base","--ask","--entry","--agent"]; LEVEL_ENV=ask ENTRY_ENV=mine USER_ENV=u',
    ]);
    expect(terminal.title).toBe("uuldana · line · ask");
  });

  it("runs at the ceiling typed with --ceiling, above the config's, and says where the ceiling came from", async () => {
    const file = join(sandbox.config, "config.json");
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), ceiling: "read-only" }));
    const terminal = open(["run", "--ceiling", "ask", "--provider", "line"], { cols: 140 });
    const screen = await terminal.waitFor("line agent ready");
    expect(screen[0]).toBe("uuldana: starting line (Stand-in line 1.0.0) at ask (--ceiling ask) · ctrl-] opens uuldana's prompt");
    expect(terminal.title).toBe("uuldana · line · ask (--ceiling)");
    expect(agentArgs(terminal)).toEqual(["--base", "--ask", "--entry"]);

    const project = sandbox.write("project/.uuldanarc.yml", "ceiling: read-only\n");
    const capped = open(["run", "--ceiling", "ask", "--provider", "line"], { cols: 160 });
    const lines = await capped.waitFor("line agent ready");
    expect(lines.slice(0, 2)).toEqual([
      `note: --ceiling ask is above the ceiling ${project} allows (read-only), so read-only is used`,
      "uuldana: starting line (Stand-in line 1.0.0) at read-only (ceiling read-only from the project's config) · ctrl-] opens uuldana's prompt",
    ]);
    expect(capped.title).toBe("uuldana · line · read-only (project)");
  });

  it("passes keys through and exits with the agent's exit code", async () => {
    const terminal = open(["run"]);
    await terminal.waitFor("line agent ready");
    terminal.type("hello there\r");
    await terminal.waitFor("you said: hello there");
    terminal.type("exit 7\r");
    expect((await terminal.exited).exitCode).toBe(7);
    const screen = await terminal.waitFor(/exited with code 7/);
    expect(screen.at(-1)).toMatch(/^uuldana: line \(Stand-in line\) exited with code 7 after \d+s$/);
    // the title stack is popped, so the user's own title comes back, before uuldana's last line
    expect(terminal.raw.lastIndexOf("\x1b[23;0t")).toBeGreaterThan(terminal.raw.lastIndexOf("you said: hello there"));
    expect(terminal.raw.lastIndexOf("\x1b[23;0t")).toBeLessThan(terminal.raw.lastIndexOf("exited with code 7"));
  });

  it("passes a resize on to the agent", async () => {
    const terminal = open(["run"], { cols: 90, rows: 25 });
    await terminal.waitFor("line agent ready");
    terminal.type("size\r");
    await terminal.waitFor("size 90x25");
    terminal.resize(120, 40);
    await terminal.waitFor("resized to 120x40");
  });

  it("shows a full-screen agent exactly as it looks without uuldana, with uuldana's title", async () => {
    const direct = new TestTerminal(join(sandbox.path, "screen"), [], { cwd: sandbox.project, env: sandbox.env });
    terminals.push(direct);
    const hosted = open(["run", "--provider", "screen"]);
    // a key typed at once: the hint that names the command key is never drawn
    for (const terminal of [hosted, direct]) {
      await terminal.waitFor("SCREEN AGENT");
      terminal.type("x");
      await terminal.waitFor("last input: 78");
    }
    expect(hosted.screen()).toEqual(direct.screen());
    expect(direct.title).toBe("screen agent");
    expect(hosted.title).toBe("uuldana · screen · ask · screen agent");
    expect(hosted.term.modes.mouseTrackingMode).toBe(direct.term.modes.mouseTrackingMode);
    expect(hosted.term.modes.bracketedPasteMode).toBe(true);
  });

  it("names the command key again on a full-screen agent's bottom row, once, until the user types", async () => {
    const terminal = open(["run", "--provider", "screen"]);
    const first = await terminal.waitFor("SCREEN AGENT");
    const hint = await terminal.waitFor("opens uuldana's prompt");
    expect(hint.at(-1)).toBe(" ctrl-] opens uuldana's prompt · /help there lists its commands");
    expect(hint.slice(0, -1)).toEqual(first.slice(0, -1));
    expect(terminal.term.buffer.active.type).toBe("alternate");
    terminal.type("x");
    await terminal.waitFor("last input: 78");
    await waitFor(() => terminal.screen().at(-1) === " status bar" && terminal.screen().join("\n").includes("size 100x30"), "the agent's screen to come back", 15_000);
    expect(terminal.screen().join("\n")).not.toContain("/help there");
  });

  it("takes the hint away after a few seconds when no key is typed, the agent's screen as it was", async () => {
    const terminal = open(["run", "--provider", "screen"]);
    const first = await terminal.waitFor("SCREEN AGENT");
    await terminal.waitFor("opens uuldana's prompt");
    await waitFor(() => terminal.screen().join("\n") === first.join("\n"), "the agent's screen to come back", 15_000);
    await terminal.settle();
    expect(terminal.screen()).toEqual(first);
  });

  it("opens its own prompt on the command key and gives the screen back to the agent untouched", async () => {
    const terminal = open(["run", "--provider", "screen"]);
    await terminal.waitFor("SCREEN AGENT");
    terminal.type("x");
    const before = await terminal.waitFor("last input: 78");
    terminal.type("\x1d");
    const prompt = await terminal.waitFor("uuldana>");
    expect(prompt[0]).toMatch(/^uuldana · screen · ask · pid \d+ · running \d+s$/);
    expect(prompt[1]).toMatch(/^session [0-9a-z]{10} · ceiling ask$/);
    expect(prompt.slice(2)).toEqual([
      "resting: none",
      "",
      "Commands: /status, /agent, /help, /close; Esc or Enter closes.",
      "ctrl-] again sends ctrl-] to the agent.",
      "",
      "uuldana>",
    ]);
    terminal.type("/status\r");
    const status = await terminal.waitFor("ceiling ask; resting: none");
    expect(status).toContain('screen 100x30, alternate screen; agent title "screen agent"');
    terminal.type("/help\r");
    const help = await terminal.waitFor("/help    this list");
    expect(help.slice(help.indexOf("/status  what runs now, and the session's state"), help.indexOf("uuldana>"))).toEqual([
      "/status  what runs now, and the session's state",
      "/agent   the priority list, and how to change it",
      "/help    this list",
      "/close   back to the agent (so do Esc, and Enter on an empty line)",
      "ctrl-] again sends ctrl-] to the agent.",
      "",
    ]);
    terminal.type("\x1b");
    await waitFor(() => terminal.screen().join("\n") === before.join("\n"), "the agent's screen to come back", 15_000);
    await terminal.settle();
    expect(terminal.screen()).toEqual(before);
    // pressed twice, the command key goes to the agent
    terminal.type("\x1d");
    await terminal.waitFor("uuldana>");
    terminal.type("\x1d");
    await terminal.waitFor("last input: 1d");
  });

  it("gives the screen back to an agent that redraws only once a new size has held for 150 ms", async () => {
    const terminal = open(["run", "--provider", "screen"], { env: { RESIZE_SETTLE_MS: "150" } });
    await terminal.waitFor("SCREEN AGENT");
    terminal.type("x");
    const before = await terminal.waitFor("last input: 78");
    terminal.type("\x1d");
    await terminal.waitFor("uuldana>");
    terminal.type("\x1b");
    await waitFor(() => terminal.screen().join("\n") === before.join("\n"), "the agent's screen to come back", 5_000);
  });

  it("keeps a line-mode agent's screen when the prompt closes", async () => {
    const terminal = open(["run"]);
    await terminal.waitFor("line agent ready");
    terminal.type("one\r");
    const before = await terminal.waitFor("you said: one");
    terminal.type("\x1d");
    await terminal.waitFor("uuldana>");
    terminal.type("\r");
    await waitFor(() => terminal.screen().join("\n") === before.join("\n"), "the agent's screen to come back", 15_000);
    terminal.type("two\r");
    await terminal.waitFor("you said: two");
  });

  it("does not lose the last output of an agent that exits right after writing", async () => {
    sandbox.write("config/config.json", { providers: ["fast"], auto_detect: false });
    for (let trial = 0; trial < 5; trial++) {
      const terminal = open(["run", "--provider", "fast"]);
      expect((await terminal.exited).exitCode).toBe(4);
      await terminal.settle();
      expect(terminal.raw).toContain("row 200 ");
      expect(terminal.raw).toContain("FINAL LINE: all written");
    }
  });

  it.each([
    ["the agent exits", (t: TestTerminal) => t.type("/exit\r"), 0],
    ["uuldana gets SIGTERM", (t: TestTerminal) => process.kill(uuldanaPid(t), "SIGTERM"), 143],
    ["uuldana gets SIGHUP", (t: TestTerminal) => process.kill(uuldanaPid(t), "SIGHUP"), 129],
  ])("leaves the terminal as it found it when %s", async (_, end, code) => {
    const terminal = open(["run"], { shell: true });
    const screen = await terminal.waitFor("line agent ready");
    const before = screen[0]!;
    end(terminal);
    expect((await terminal.exited).exitCode).toBe(code);
    expect(await settingsAfter(terminal)).toBe(before);
  });

  it("stops the agent gracefully when uuldana is told to stop, and says how", async () => {
    const pids = join(sandbox.dir, "pids");
    const terminal = open(["run"], { env: { PID_FILE: pids } });
    await terminal.waitFor("line agent ready");
    process.kill(terminal.child.pid, "SIGTERM");
    expect((await terminal.exited).exitCode).toBe(143);
    await terminal.settle();
    const screen = await terminal.waitFor("uuldana: stopped");
    expect(screen.slice(-2)).toEqual(["bye", expect.stringMatching(/^uuldana: stopped line \(Stand-in line\) with its exit keys after \d+s$/)]);
    const agentPid = Number(readFileSync(pids, "utf8").split(" ")[1]);
    expect(isAlive(agentPid)).toBe(false);
  });

  it("turns off what a crashed full-screen agent left on", async () => {
    const terminal = open(["run", "--provider", "screen"], { shell: true });
    await terminal.waitFor("SCREEN AGENT");
    expect(terminal.term.modes.mouseTrackingMode).not.toBe("none");
    terminal.type("Q");
    expect((await terminal.exited).exitCode).toBe(3);
    await terminal.settle();
    expect(terminal.term.buffer.active.type).toBe("normal");
    expect(terminal.term.modes.mouseTrackingMode).toBe("none");
    expect(terminal.term.modes.bracketedPasteMode).toBe(false);
    expect(terminal.term.modes.sendFocusMode).toBe(false);
    expect(terminal.raw).toContain("\x1b[?25h");
    const screen = terminal.screen();
    expect(await settingsAfter(terminal)).toBe(screen[0]);
  });

  it("restores the terminal when uuldana itself crashes", async () => {
    const crash = join(fixtures, "crash-uuldana.mjs");
    const terminal = open(["run"], { shell: true, env: { NODE_OPTIONS: `--import ${crash}` } });
    const before = (await terminal.waitFor("line agent ready"))[0]!;
    expect((await terminal.exited).exitCode).toBe(70);
    const screen = await terminal.waitFor("settings after: ");
    expect(screen.slice(-3, -1)).toEqual([
      "uuldana: internal error: a test made uuldana crash [E_INTERNAL]",
      "hint: this is a bug in uuldana; please report it with the command you ran",
    ]);
    expect(await settingsAfter(terminal)).toBe(before);
  });
});

describe("uuldana run without a terminal", () => {
  it("passes output through and answers the agent's terminal queries from the screen model", () => {
    const run = spawnSync(process.execPath, [bin, "run", "--provider", "dsr"], { cwd: sandbox.project, env: sandbox.env, encoding: "utf8", timeout: 20_000 });
    // byte for byte as the agent's terminal gave them (its line discipline turns \n into \r\n)
    expect(run.stdout).toBe("asking where the cursor is\r\r\n\x1b[6ncursor at row 2, column 1\r\r\n");
    expect(run.stderr).toMatch(/^uuldana: starting dsr \(Stand-in dsr 1\.0\.0\) at ask · ctrl-\] opens uuldana's prompt\nuuldana: dsr \(Stand-in dsr\) exited with code 0 after \d+s\n$/);
    expect(run.status).toBe(0);
  });

  it.each([["run"], ["resume"]])("%s refuses a terminal whose keys cannot reach the agent (its input redirected), and starts nothing", async (command) => {
    const script = `"${process.execPath}" "${bin}" ${command} < /dev/null; echo "exit $?"`;
    const terminal = new TestTerminal("/bin/sh", ["-c", script], { cwd: sandbox.project, env: sandbox.env, cols: 300 });
    terminals.push(terminal);
    await terminal.exited;
    const screen = await terminal.waitFor("exit 2");
    expect(screen.slice(0, 3)).toEqual([
      `uuldana: ${command} shows the agent on this terminal, but its standard input is not the terminal, so no key you type would reach the agent [E_USAGE]`,
      `hint: start it without redirecting its input (uuldana ${command}); a script that drives the agent redirects its output too (uuldana ${command} < keys > screen.log)`,
      "exit 2",
    ]);
    expect(existsSync(join(sandbox.data, "sessions"))).toBe(false);
  });

  it("exits 1 with one line per entry when no entry can run", () => {
    sandbox.write("config/config.json", { providers: ["nosuch", "line"], auto_detect: false, ceiling: "read-only" });
    sandbox.write("config/providers/line.json", { id: "line", name: "Stand-in line", executables: ["line"], version: { args: ["--version"], pattern: "^line (\\S+)" }, levels: { ask: {} } });
    const run = spawnSync(process.execPath, [bin, "run"], { cwd: sandbox.project, env: sandbox.env, encoding: "utf8" });
    expect(run.stderr).toBe(
      [
        "uuldana: no entry can run under the ceiling read-only [E_NO_ELIGIBLE_ENTRY]",
        '  nosuch: unknown provider "nosuch": no valid manifest has this id',
        '  line: refused: cannot run within the ceiling "read-only" (it enforces only ask)',
        "",
      ].join("\n"),
    );
    expect(run.status).toBe(1);
  });
});

describe("uuldana run reading the agent's screen", () => {
  beforeEach(() => {
    sandbox.write("config/config.json", { providers: ["limit"], auto_detect: false, quiet_seconds: 0.3, dismiss_seconds: 1.5 });
  });

  it("says when the agent's allowance is gone and when it returns, and leaves the agent running", async () => {
    const screen = await runPastLimit();
    expect(screen.slice(-2)).toEqual([
      `uuldana: limit said its usage allowance is gone (weekly limit; rests until ${LIMIT_RESET.shown}); there is no other entry to move to, so it keeps running`,
      expect.stringMatching(/^uuldana: limit \(Stand-in limit\) exited with code 0 after \d+s$/),
    ]);
  });

  it("reads a numeric reset date in the order of the locale the agent runs in", async () => {
    const reset = dayFirstReset(new Date());
    const terminal = open(["run"], { env: { TZ: "Europe/Berlin", LIMIT_MODE: "banner", LANG: "en_GB.UTF-8", LIMIT_RESET: reset.text }, cols: 220 });
    await terminal.waitFor("You've hit your weekly limit");
    // the stop is told at the end: it is awaited in the journal, however long a loaded machine takes to decide it
    await waitForJournal(sandbox.data, (event) => event.type === "limit", "the limit in the journal");
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    const screen = await terminal.waitFor("exited with code 0");
    expect(screen.at(-2)).toBe(`uuldana: limit said its usage allowance is gone (weekly limit; rests until ${reset.shown}); there is no other entry to move to, so it keeps running`);
  });

  it("shows that limit-like text was ignored when the agent kept working: title, header and last line", async () => {
    // the stand-in works every 100 ms: a quiet of a second, so a loaded machine that stalls it does not make a stop
    sandbox.write("config/config.json", { providers: ["limit"], auto_detect: false, quiet_seconds: 1, dismiss_seconds: 2.5 });
    const terminal = open(["run"], { env: { LIMIT_MODE: "keep-working", WORK_SECONDS: "5" }, cols: 160 });
    await terminal.waitFor("You've hit your weekly limit");
    await waitFor(() => terminal.title.endsWith(" ⚠"), "the ⚠ mark in the title", 10_000);
    expect(terminal.title).toBe("uuldana · limit · ask ⚠");
    terminal.type("\x1d");
    const header = await terminal.waitFor("uuldana>");
    const ignored = header.find((line) => line.startsWith("text like a usage limit was ignored at "));
    expect(ignored?.replace(/ at \d\d:\d\d: /, " at HH:MM: ")).toBe(`text like a usage limit was ignored at HH:MM: ${LIMIT_RESET.message}`);
    terminal.type("\x1b");
    await new Promise((resolve) => setTimeout(resolve, 2500));
    terminal.type("/exit\r");
    await terminal.exited;
    const screen = await terminal.waitFor("exited with code 0");
    expect(screen.at(-2)?.replace(/ at \d\d:\d\d: /, " at HH:MM: ")).toBe(`uuldana: text like a usage limit was ignored at HH:MM: ${LIMIT_RESET.message}`);
    const session = readdirSync(join(sandbox.data, "sessions"))[0]!;
    const events = readFileSync(join(sandbox.data, "sessions", session, "journal.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line));
    expect(events.find((event) => event.type === "ignored")).toMatchObject({ entry: "limit", text: LIMIT_RESET.message });
  });
});

describe("failover", () => {
  beforeEach(() => {
    sandbox.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, quiet_seconds: 0.3, dismiss_seconds: 5 });
  });

  it("moves the conversation to the next entry without a key pressed, without the limit text, and rests the first", async () => {
    const terminal = open(["run"], { env: { TZ: "Europe/Berlin", LIMIT_MODE: "answer" }, cols: 220 });
    await terminal.waitFor("limit agent ready");
    terminal.type("please add a test for the lexer\r");
    const screen = await terminal.waitFor("line agent ready", 20_000);
    expect(screen).toContain(
      `uuldana: limit's weekly limit is gone; it rests until ${LIMIT_RESET.shown}; continuing with line (Stand-in line 1.0.0) at ask with the conversation so far · ctrl-] opens uuldana's prompt`,
    );
    const args = agentArgs(terminal);
    expect(args.slice(0, 2)).toEqual(["--base", "--ask"]);
    const prompt = args[2]!;
    expect(prompt).toContain("You are continuing a conversation from Stand-in limit (limit)");
    expect(prompt).toContain("please add a test for the lexer");
    expect(prompt).toContain("I answered: please add a test for the lexer");
    expect(prompt).not.toContain("hit your weekly limit");
    expect(prompt).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
    // the journal's order below is fixed once the new agent has shown that it took the conversation
    await waitFor(() => sessionJournals(sandbox.data)[0]!.some((event) => event.type === "receiver"), "the line agent to take the conversation");
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    const list = JSON.parse((await sandbox.run(["providers", "list", "--json"])).stdout) as { entry: string; resting_until: string | null }[];
    expect(list.find((row) => row.entry === "limit")?.resting_until).toBe(LIMIT_RESET.iso);
    const journals = readdirSync(join(sandbox.data, "sessions"));
    expect(journals).toHaveLength(1);
    const events = readFileSync(join(sandbox.data, "sessions", journals[0]!, "journal.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line).type);
    expect(events).toEqual(["session-start", "run-start", "user", "candidate", "limit", "cooldown", "conversation", "run-end", "handoff-from", "run-start", "receiver", "user", "conversation", "run-end", "session-end"]);
    const sessionId = journals[0]!;
    const listed = await sandbox.run(["sessions", "--json"]);
    expect(JSON.parse(listed.stdout)).toEqual([
      { id: sessionId, started: expect.stringMatching(/^\d{4}-/), cwd: sandbox.project, runs: ["limit", "line"], state: "ended", exit_code: 0 },
    ]);
    const table = await sandbox.run(["sessions"]);
    expect(table.stdout.split("\n")[1]).toMatch(new RegExp(`^${sessionId}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC  ${sandbox.project}  limit → line  ended$`));
    const shown = (await sandbox.run(["sessions", "show", sessionId])).stdout.split("\n").map((line) => line.replace(/^\d\d:\d\d {2}/, ""));
    expect(shown.slice(1, -1)).toEqual([
      "limit started at ask",
      "you (to limit): please add a test for the lexer",
      `limit: usage limit (weekly, inferred): ${LIMIT_RESET.message}`,
      `limit rests until ${LIMIT_RESET.shown}`,
      `limit's conversation, from its screen: ${join(sandbox.data, "sessions", sessionId, "conversation-1.txt")}`,
      "limit ended (stopped by keys), exit 0",
      "line started at ask, with the conversation so far",
      "line took the conversation (it showed it as its turn)",
      "you (to line): /exit",
      `line's conversation, from its screen: ${join(sandbox.data, "sessions", sessionId, "conversation-2.txt")}`,
      "line ended, exit 0",
      "session ended, exit 0",
    ]);
    expect(readFileSync(join(sandbox.data, "sessions", sessionId, "conversation-1.txt"), "utf8")).toContain("I answered: please add a test for the lexer");

    // resume: the same session, the first eligible entry (the first still rests), both runs' text in its prompt
    const resumed = open(["resume"], { env: { TZ: "Europe/Berlin" }, cols: 220 });
    await resumed.waitFor("line agent ready", 20_000);
    const again = agentArgs(resumed).at(-1)!;
    expect(again).toContain("--- Stand-in limit (limit), as its screen showed it ---");
    expect(again).toContain("I answered: please add a test for the lexer");
    expect(again).toContain("--- Stand-in line (line), as its screen showed it ---");
    expect(again).not.toContain("hit your weekly limit");
    resumed.type("/exit\r");
    await resumed.exited;
    expect(readdirSync(join(sandbox.data, "sessions"))).toEqual([sessionId]);
    const after = readFileSync(join(sandbox.data, "sessions", sessionId, "journal.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line).type);
    expect(after.slice(15, 18)).toEqual(["session-resume", "skipped", "run-start"]);
  });

  it("with failover off, tells the user and leaves the agent running", async () => {
    sandbox.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, quiet_seconds: 0.3, failover: false });
    const screen = await runPastLimit();
    expect(screen.at(-2)).toBe(`uuldana: limit said its usage allowance is gone (weekly limit; rests until ${LIMIT_RESET.shown}); failover is off, so it keeps running`);
  });

  it("tries the entry after one that cannot start", async () => {
    sandbox.write("config/config.json", { providers: ["fast", "line"], auto_detect: false });
    const terminal = open(["run"]);
    const screen = await terminal.waitFor("line agent ready");
    expect(screen).toContain("uuldana: fast could not start (it exited with status 4 at once)");
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
  });
});

describe("failover between stand-ins of real agents, with the built-in manifests", () => {
  it("moves from claude to codex without a key pressed; claude-code rests until the printed reset; codex gets the conversation", async () => {
    linkAgent(sandbox, "claude", "limit-agent.mjs");
    linkAgent(sandbox, "codex", "line-agent.mjs");
    // both signed in, as their logins leave their folders: an entry that is not would be skipped
    sandbox.write(".claude/.credentials.json", "{}");
    sandbox.write(".codex/auth.json", "{}");
    sandbox.write("config/config.json", { providers: ["claude-code", "codex"], auto_detect: false, quiet_seconds: 0.5 });
    const terminal = open(["run"], { env: { TZ: "Europe/Berlin", LIMIT_MODE: "answer" }, cols: 220 });
    await terminal.waitFor("limit agent ready");
    expect(terminal.title).toBe("uuldana · claude-code · ask");
    terminal.type("rename the helper to parseLine\r");
    await terminal.waitFor("line agent ready", 20_000);
    expect(terminal.title).toBe("uuldana · codex · ask");
    const args = agentArgs(terminal);
    expect(args.slice(0, 5)).toEqual(["--no-daemon", "--sandbox", "read-only", "--ask-for-approval", "on-request"]);
    expect(args[5]).toContain("rename the helper to parseLine");
    expect(args[5]).not.toContain("weekly limit");
    terminal.type("/exit\r");
    await terminal.exited;
    const list = await sandbox.run(["providers", "list"]);
    expect(list.stdout.split("\n")[1]).toBe(
      `1  claude-code  claude-code  built-in  binary    2.1.332  yes        ask    argv    ${LIMIT_RESET.shown}  resting until ${LIMIT_RESET.shown}`,
    );
  });
});

describe("failover chains and ends", () => {
  it("carries A's and B's parts to C along a three-hop chain", async () => {
    linkAgent(sandbox, "limit2", "limit-agent.mjs");
    sandbox.write("config/providers/limit2.json", { ...JSON.parse(readFileSync(join(sandbox.config, "providers", "limit.json"), "utf8")), id: "limit2", name: "Stand-in limit2", executables: ["limit2"], version: { args: ["--version"], pattern: "^limit2 (\\S+)" } });
    sandbox.write("config/config.json", { providers: ["limit", "limit2", "line"], auto_detect: false, quiet_seconds: 0.3 });
    const terminal = open(["run"], { env: { TZ: "Europe/Berlin", LIMIT_MODE: "answer" }, cols: 220 });
    await terminal.waitFor("limit agent ready");
    terminal.type("first request\r");
    await waitFor(() => (terminal.raw.match(/limit agent ready/g) ?? []).length === 2, "the second agent", 20_000);
    await terminal.settle();
    terminal.type("second request\r");
    await terminal.waitFor("line agent ready", 20_000);
    const args = agentArgs(terminal);
    const prompt = args.at(-1)!;
    expect(prompt).toContain("--- Stand-in limit (limit), as its screen showed it ---");
    expect(prompt).toContain("I answered: first request");
    expect(prompt).toContain("--- Stand-in limit2 (limit2), as its screen showed it ---");
    expect(prompt).toContain("I answered: second request");
    expect(prompt).not.toContain("weekly limit");
    terminal.type("/exit\r");
    await terminal.exited;
  });

  it("ends the session when uuldana is told to stop while it leaves an agent at its limit", async () => {
    // exit keys this agent ignores, so leaving it takes a while: the signal comes meanwhile
    const manifest = JSON.parse(readFileSync(join(sandbox.config, "providers", "limit.json"), "utf8"));
    sandbox.write("config/providers/limit.json", { ...manifest, exit: { keys: ["{pause}"], wait_seconds: 4, signals: ["SIGTERM"], signal_wait_seconds: 1 } });
    sandbox.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, quiet_seconds: 0.3 });
    const terminal = open(["run"], { env: { TZ: "Europe/Berlin", LIMIT_MODE: "banner" }, cols: 220 });
    const journal = (): string[] => {
      const sessions = join(sandbox.data, "sessions");
      const [id] = existsSync(sessions) ? readdirSync(sessions) : [];
      // the session's folder is made a moment before its journal
      const file = id ? join(sessions, id, "journal.jsonl") : undefined;
      return file && existsSync(file) ? readFileSync(file, "utf8").trim().split("\n") : [];
    };
    await waitFor(() => journal().some((line) => line.includes('"type":"limit"')), "the limit in the journal", 20_000);
    const pid = JSON.parse(journal()[0]!).pid as number;
    process.kill(pid, "SIGTERM");
    const exit = await terminal.exited;
    await terminal.settle();
    expect(exit.exitCode).toBe(143);
    const types = journal().map((line) => JSON.parse(line).type as string);
    expect(types.filter((type) => type === "run-start")).toHaveLength(1);
    expect(types.at(-1)).toBe("session-end");
    expect(terminal.raw).not.toContain("continuing with line");
  });

  it("moves on when the agent exits with a failing status right after the message", async () => {
    sandbox.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, quiet_seconds: 5 });
    const terminal = open(["run"], { env: { TZ: "Europe/Berlin", LIMIT_MODE: "fail" }, cols: 220 });
    const screen = await terminal.waitFor("line agent ready", 20_000);
    expect(screen.some((line) => line.startsWith(`uuldana: limit's weekly limit is gone; it rests until ${LIMIT_RESET.shown}; continuing with line`))).toBe(true);
    // nobody had spoken to the first agent, so the second starts without a prompt
    expect(terminal.raw.replace(/\r?\n/g, " ")).toContain('line agent ready; args: ["--base","--ask"];');
    terminal.type("/exit\r");
    await terminal.exited;
  });

  it("ends with one line per entry and exit 1 when every entry is resting, and a new run honours the cooldown", async () => {
    sandbox.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, quiet_seconds: 0.3 });
    const terminal = open(["run"], { env: { TZ: "Europe/Berlin", LIMIT_MODE: "fail" }, cols: 220 });
    await terminal.waitFor("line agent ready", 20_000);
    terminal.type("/exit\r");
    await terminal.exited;
    await sandbox.run(["cooldowns", "clear"]);
    const until = new Date(Date.now() + 90 * 60_000).toISOString();
    const { updateCooldowns } = await import("../core/session/cooldowns.js");
    await updateCooldowns(sandbox.data, (entries) => {
      for (const key of ["limit", "line"]) entries.set(key, { until: new Date(until), since: new Date(), source: "inferred", kind: "weekly", text: "limit" });
    });
    const run = await sandbox.run(["run"]);
    expect(run.code).toBe(1);
    const shown = `${until.slice(0, 16).replace("T", " ")} UTC`;
    expect(run.stderr).toBe(
      [
        "uuldana: no entry can run under the ceiling ask [E_NO_ELIGIBLE_ENTRY]",
        `  limit: resting until ${shown}`,
        `  line: resting until ${shown}`,
        `hint: the first resting entry returns in 90 minutes (${shown})`,
        "",
      ].join("\n"),
    );
  });
});

describe("rests that end", () => {
  it("starts an entry again once its rest is over, and says so", async () => {
    const { updateCooldowns } = await import("../core/session/cooldowns.js");
    const ended = new Date(Date.now() - 60_000);
    await updateCooldowns(sandbox.data, (entries) => void entries.set("line", { until: new Date(Date.now() + 1000), since: new Date(), source: "inferred", kind: "weekly", text: "x" }));
    // the row stays in the table until the next write; make it one that has just ended
    const file = join(sandbox.data, "cooldowns.json");
    const table = JSON.parse(readFileSync(file, "utf8"));
    table.entries.line.until = ended.toISOString();
    sandbox.write("data/cooldowns.json", table);
    const terminal = open(["run"], { cols: 220 });
    const screen = await terminal.waitFor("line agent ready");
    expect(screen[0]).toBe(
      `uuldana: line has rested (its allowance returned at ${ended.toISOString().slice(0, 16).replace("T", " ")} UTC); starting it again: line (Stand-in line 1.0.0) at ask · ctrl-] opens uuldana's prompt`,
    );
    terminal.type("/exit\r");
    await terminal.exited;
  });

  it("ends the session when the agent exits 0 after its limit message: the user left", async () => {
    sandbox.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, quiet_seconds: 5 });
    const terminal = open(["run"], { env: { LIMIT_MODE: "banner" }, cols: 220 });
    await terminal.waitFor("You've hit your weekly limit");
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    const screen = await terminal.waitFor("exited with code 0");
    expect(screen.join("\n")).not.toContain("line agent ready");
  });
});

describe("secrets", () => {
  it("never reach the journal: entries' env values and what redact patterns match", async () => {
    sandbox.write("config/config.json", { providers: [{ id: "line", env: { ACCOUNT_DIR: "/secret/account-dir" } }], auto_detect: false, redact: ["sk-[A-Za-z0-9]{8,}"] });
    const terminal = open(["run"], { cols: 200 });
    await terminal.waitFor("line agent ready");
    terminal.type("use sk-abcdefghijklmnop from /secret/account-dir\r");
    await terminal.waitFor("you said: use sk-abcdefghijklmnop");
    terminal.type("/exit\r");
    await terminal.exited;
    const folder = join(sandbox.data, "sessions", readdirSync(join(sandbox.data, "sessions"))[0]!);
    const kept = readdirSync(folder).map((file) => readFileSync(join(folder, file), "utf8")).join("\n");
    expect(kept).toContain("you said: use [redacted] from [redacted]");
    expect(kept).not.toContain("sk-abcdefghijklmnop");
    expect(kept).not.toContain("/secret/account-dir");
  });

  it("rejects a redact pattern that is not a regular expression, naming the place", async () => {
    const file = sandbox.write("config/config.json", { redact: ["sk-(unclosed"] });
    expect(await sandbox.run(["run"])).toEqual({
      code: 2,
      stdout: "",
      stderr: [
        `uuldana: invalid config ${file} (1 problem) [E_CONFIG_INVALID]`,
        "  at /redact/0 (redact[0]): is not a valid regular expression (/sk-(unclosed/g: Unterminated group)",
        '    value: "sk-(unclosed"',
        "    allowed: a JavaScript regular expression",
        "    hint: Regular expressions whose matches are replaced by [redacted] in everything a session journal keeps (entries' env values always are).",
        "",
      ].join("\n"),
    });
  });
});

describe("/agent", () => {
  it("reorders the priority list from inside a session: config.json keeps the rest, the next failover follows", async () => {
    const config = sandbox.write("config/config.json", { $schema: "../schemas/config.schema.json", quiet_seconds: 0.3, providers: ["limit", "line", "screen"], auto_detect: false });
    const terminal = open(["run"], { env: { TZ: "Europe/Berlin", LIMIT_MODE: "answer" }, cols: 220 });
    await terminal.waitFor("limit agent ready");
    terminal.type("\x1d");
    await terminal.waitFor("uuldana>");
    terminal.type("/agent\r");
    const listed = await terminal.waitFor("change it:");
    expect(listed).toContain("  1. limit: ready at ask");
    terminal.type("/agent first screen\r");
    await terminal.waitFor("providers: screen, limit, line");
    expect(readFileSync(config, "utf8")).toBe(
      JSON.stringify({ $schema: "../schemas/config.schema.json", quiet_seconds: 0.3, providers: ["screen", "limit", "line"], auto_detect: false }, null, 2) + "\n",
    );
    terminal.type("\x1b");
    await terminal.waitFor("limit agent ready");
    terminal.type("carry on\r");
    await terminal.waitFor("SCREEN AGENT", 20_000);
    terminal.type("q");
    await terminal.exited;
  });
});

describe("resume through the agent's own resume flag", () => {
  it("resumes natively when the first eligible entry ran last and its manifest says how", async () => {
    sandbox.write("config/config.json", { providers: ["line"], auto_detect: false });
    const first = open(["run"], { cols: 200 });
    await first.waitFor("line agent ready");
    first.type("hello\r");
    await first.waitFor("you said: hello");
    first.type("/exit\r");
    await first.exited;
    const manifest = JSON.parse(readFileSync(join(sandbox.config, "providers", "line.json"), "utf8"));
    sandbox.write("config/providers/line.json", { ...manifest, resume: { args: ["--continue"] } });
    const resumed = open(["resume"], { cols: 200 });
    const screen = await resumed.waitFor("line agent ready");
    expect(screen[0]).toBe("uuldana: resuming line's own conversation (--continue); starting line (Stand-in line 1.0.0) at ask · ctrl-] opens uuldana's prompt");
    expect(agentArgs(resumed)).toEqual(["--base", "--ask", "--continue"]);
    resumed.type("/exit\r");
    await resumed.exited;
  });
});
