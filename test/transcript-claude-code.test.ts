import { spawnSync } from "node:child_process";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import type { Transcript, TranscriptQuery, Turn } from "../core/index.js";
import { loadManifestFile } from "../core/registry/manifest.js";
import { openProvider, type HookProblem } from "../core/registry/provider.js";
import { fixtures, root } from "./helpers.js";

// Claude Code's transcript hook, through the built-in manifest and its compiled adapter, on session files the real
// CLI 2.1.332 wrote (test/fixtures/transcripts/claude-code/README.md), laid out in temporary folders as it lays them
// out: <config dir>/projects/<folder named for the working directory>/<session id>.jsonl.

const FIXTURES = join(fixtures, "transcripts", "claude-code", "projects", "-home-user-project");
// started with --session-id; two typed turns, the first answered with a Read and a Bash call, the second refused at
// the 5-hour limit; later continued by a run with --continue
const FIRST = "df08637d-c4e1-4cb2-a285-d01a2bb9db32";
// started with --session-id and a first prompt in its arguments; a sub-agent, a background task's notice, a "!" command
const SECOND = "d998fb1c-8742-4424-89d2-9cb99ac01bc8";
const RUNS = {
  first: { started: "2026-12-02T00:42:05.256Z", ended: "2026-12-02T00:42:13.878Z" },
  continued: { started: "2026-12-02T00:42:15.079Z", ended: "2026-12-02T00:42:19.421Z" },
  second: { started: "2026-12-02T00:42:24.525Z", ended: "2026-12-02T00:43:04.294Z" },
};
const PROMPT = "You are taking over a conversation from another agent.\n\nThe user's last request, quoted whole:\n\n> Which colour is the lighthouse on the north pier?";

const FIRST_TURNS: Turn[] = [
  { role: "user", text: "Which colour is the lighthouse on the north pier?" },
  { role: "agent", text: "Let me read the harbour notes." },
  { role: "tool", text: "Read: notes.txt" },
  { role: "agent", text: "Let me check the notes once more." },
  { role: "tool", text: "Bash: grep -c saffron notes.txt" },
  { role: "agent", text: "The notes say the lighthouse is painted saffron yellow." },
  { role: "user", text: "And how tall is it?" },
];
const CONTINUED_TURNS: Turn[] = [
  { role: "user", text: "Is it still lit at night?" },
  { role: "agent", text: "Yes, it shows a white flash every ten seconds." },
];
const SECOND_TURNS: Turn[] = [
  { role: "user", text: PROMPT },
  { role: "agent", text: "Let me read the harbour notes." },
  { role: "tool", text: "Agent: Check the notes" },
  { role: "agent", text: "The notes say the lighthouse is painted saffron yellow.\n\nOK." },
  { role: "user", text: "!grep -c saffron notes.txt" },
  { role: "agent", text: "OK." },
];

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

const record = await loadManifestFile(join(root, "manifests", "claude-code.json"), "built-in");
const problems: HookProblem[] = [];
const hooks = await openProvider(record, { report: (problem) => problems.push(problem) });

// The hook's answer, which must come without the guard turning it off.
function read(query: TranscriptQuery): Transcript | undefined {
  const found = hooks.transcript(query);
  expect(problems).toEqual([]);
  return found;
}

interface Layout {
  cwd: string;
  env: Record<string, string>;
  config: string;
  folder: string;
  // a fixture's session file (or other text) put where the CLI puts it, written last at that time
  place(id: string, options?: { as?: string; text?: string; at?: string; folder?: string }): string;
  query(run: keyof typeof RUNS, more?: Partial<TranscriptQuery>): TranscriptQuery;
}

// The account folder: CLAUDE_CONFIG_DIR's when "own", else ~/.claude under HOME. The working directory's name has
// a dot, an underscore and a letter outside ASCII.
function layout(account: "home" | "own" = "home", cwdName = "project.v2_ü"): Layout {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "uuldana-transcript-")));
  scratch.push(dir);
  const home = join(dir, "home");
  const cwd = join(dir, cwdName);
  mkdirSync(cwd, { recursive: true });
  const config = account === "own" ? join(dir, "accounts", "work") : join(home, ".claude");
  const env: Record<string, string> = account === "own" ? { HOME: home, CLAUDE_CONFIG_DIR: config } : { HOME: home };
  const folder = join(config, "projects", cwd.replace(/[^a-zA-Z0-9]/g, "-"));
  return {
    cwd,
    env,
    config,
    folder,
    place(id, options = {}) {
      const file = join(options.folder ?? folder, `${options.as ?? id}.jsonl`);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, options.text ?? sessionText(id, cwd, config, options.as));
      const at = new Date(options.at ?? (id === SECOND ? RUNS.second.ended : RUNS.continued.ended));
      utimesSync(file, at, at);
      return file;
    },
    query: (run, more = {}) => ({ cwd, env, started: new Date(RUNS[run].started), ended: new Date(RUNS[run].ended), sessionId: undefined, prompt: undefined, ...more }),
  };
}

// A fixture as the CLI would have written it in that working directory and account (and under another id).
function sessionText(id: string, cwd: string, config: string, as?: string): string {
  const inJson = (text: string): string => JSON.stringify(text).slice(1, -1);
  return readFileSync(join(FIXTURES, `${id}.jsonl`), "utf8")
    .replaceAll("/home/user/.claude", inJson(config))
    .replaceAll("/home/user/project", inJson(cwd))
    .replaceAll("-home-user-project", cwd.replace(/[^a-zA-Z0-9]/g, "-"))
    .replaceAll(id, as ?? id);
}

describe("Claude Code's transcript", () => {
  it("is the file of the session id uuldana gave, with that run's turns only: no thinking, tool results or limit message", () => {
    const at = layout();
    const file = at.place(FIRST);
    at.place(SECOND);
    expect(read(at.query("first", { sessionId: FIRST }))).toEqual({ file, turns: FIRST_TURNS });
  });

  it("is read from CLAUDE_CONFIG_DIR's projects when the entry sets it", () => {
    const at = layout("own");
    const file = at.place(FIRST);
    expect(file.startsWith(join(at.config, "projects", ""))).toBe(true);
    expect(read(at.query("first", { sessionId: FIRST }))).toEqual({ file, turns: FIRST_TURNS });
  });

  it("leaves out a sub-agent's traffic, a background task's notice and the output of a ! command", () => {
    const at = layout();
    const file = at.place(SECOND);
    const sub = join(at.folder, SECOND, "subagents", "agent-a18833d89a2471288.jsonl");
    mkdirSync(dirname(sub), { recursive: true });
    writeFileSync(sub, readFileSync(join(FIXTURES, SECOND, "subagents", "agent-a18833d89a2471288.jsonl"), "utf8"));
    expect(read(at.query("second", { sessionId: SECOND, prompt: PROMPT }))).toEqual({ file, turns: SECOND_TURNS });
  });

  it("after --continue (no id of uuldana's): only the entries this run appended to the earlier session's file", () => {
    const at = layout();
    const file = at.place(FIRST);
    at.place(SECOND);
    expect(read(at.query("continued"))).toEqual({ file, turns: CONTINUED_TURNS });
  });

  it("without an id: the one file of the working directory written during the run, opening with the run's prompt", () => {
    const at = layout();
    at.place(FIRST);
    const file = at.place(SECOND);
    expect(read(at.query("second", { prompt: PROMPT }))).toEqual({ file, turns: SECOND_TURNS });
    expect(read(at.query("second", { prompt: `${PROMPT}\r\n` }))).toEqual({ file, turns: SECOND_TURNS });
    expect(read(at.query("second", { prompt: "Which colour is the lighthouse on the north pier?" }))).toBeUndefined();
    expect(read(at.query("first"))).toEqual({ file: join(at.folder, `${FIRST}.jsonl`), turns: FIRST_TURNS });
  });

  it("without an id: none when two sessions fit equally, never a guess", () => {
    const at = layout();
    at.place(FIRST);
    at.place(FIRST, { as: "0b7c4c55-0d8e-4c1e-9a51-3f1f3f7d2a10" });
    expect(read(at.query("continued"))).toBeUndefined();
    expect(read(at.query("first", { sessionId: FIRST }))?.turns).toEqual(FIRST_TURNS);
  });

  it("never another session's file: earlier, later, another working directory, another id inside", () => {
    const at = layout();
    at.place(FIRST);
    const hour = 3_600_000;
    const shifted = (ms: number): Partial<TranscriptQuery> => ({ started: new Date(Date.parse(RUNS.first.started) + ms), ended: new Date(Date.parse(RUNS.first.ended) + ms) });
    // a run an hour later, or an hour earlier, than the session's entries
    expect(read(at.query("first", shifted(hour)))).toBeUndefined();
    expect(read(at.query("first", shifted(-hour)))).toBeUndefined();
    // the file was last written before the run began: not even opened
    const early = layout();
    early.place(FIRST, { at: "2026-12-02T00:00:00Z" });
    expect(read(early.query("continued"))).toBeUndefined();
    // a session the CLI recorded in another working directory, though in this folder
    const other = layout();
    other.place(FIRST, { text: sessionText(FIRST, join(other.cwd, "elsewhere"), other.config) });
    expect(read(other.query("continued"))).toBeUndefined();
    expect(read(other.query("first", { sessionId: FIRST }))).toBeUndefined();
    // a file named for one session that holds another's entries
    const renamed = layout();
    renamed.place(FIRST, { as: FIRST, text: sessionText(FIRST, renamed.cwd, renamed.config, SECOND) });
    expect(read(renamed.query("first", { sessionId: FIRST }))).toBeUndefined();
    expect(read(renamed.query("continued"))).toBeUndefined();
  });

  it("never another account's folder", () => {
    const at = layout("own");
    // the session is in ~/.claude, but this entry's account is CLAUDE_CONFIG_DIR
    const home = layout();
    home.place(FIRST);
    const env = { HOME: home.env.HOME!, CLAUDE_CONFIG_DIR: at.config };
    expect(read(home.query("first", { env, sessionId: FIRST }))).toBeUndefined();
    expect(read(home.query("continued", { env }))).toBeUndefined();
    // and the other way round: the session is in CLAUDE_CONFIG_DIR, the entry has only HOME
    at.place(FIRST);
    expect(read(at.query("first", { env: { HOME: at.env.HOME! }, sessionId: FIRST }))).toBeUndefined();
    // no account folder that can be named: no HOME, or a relative one
    expect(read(at.query("first", { env: {}, sessionId: FIRST }))).toBeUndefined();
    expect(read(at.query("first", { env: { CLAUDE_CONFIG_DIR: "accounts/work" }, sessionId: FIRST }))).toBeUndefined();
  });

  it("finds a session id's file in another folder of the account when the CLI named it otherwise, if its working directory is this one", () => {
    const at = layout();
    const file = at.place(FIRST, { folder: join(at.config, "projects", "named-otherwise") });
    expect(read(at.query("first", { sessionId: FIRST }))).toEqual({ file, turns: FIRST_TURNS });
    const other = layout();
    other.place(FIRST, { folder: join(other.config, "projects", "named-otherwise"), text: sessionText(FIRST, "/somewhere/else", other.config) });
    expect(read(other.query("first", { sessionId: FIRST }))).toBeUndefined();
  });

  it.each([
    // dots, underscores, spaces and letters outside ASCII are each "-", an emoji (two UTF-16 units) "--"
    ["/tmp/uuldana-names/my.proj_v2 café-ünï 漢字😀", "-tmp-uuldana-names-my-proj-v2-caf---n------"],
    // past 200 characters: cut, then "-" and a hash of the path
    [
      "/tmp/uuldana-names/" + [0, 1, 2, 3, 4].map((i) => `segment_${i}.with.dots${"x".repeat(40)}`).join("/"),
      "-tmp-uuldana-names-segment-0-with-dotsxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-segment-1-with-dotsxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-segment-2-with-dotsxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-s-s68j49",
    ],
  ])("is looked for in the folder the real CLI names for %s", (cwd, name) => {
    const at = layout();
    const folder = join(at.config, "projects", name);
    const file = at.place(FIRST, { folder, text: sessionText(FIRST, cwd, at.config) });
    expect(read({ ...at.query("continued"), cwd })).toEqual({ file, turns: CONTINUED_TURNS });
  });

  it("follows the working directory's links, as the CLI records it", () => {
    const at = layout();
    const file = at.place(FIRST);
    const link = join(dirname(at.cwd), "link-to-project");
    symlinkSync(at.cwd, link);
    expect(read({ ...at.query("first", { sessionId: FIRST }), cwd: link })).toEqual({ file, turns: FIRST_TURNS });
  });

  it("is none for a missing file, an id that is not a UUID, or a folder that is not there", () => {
    const at = layout();
    expect(read(at.query("first", { sessionId: FIRST }))).toBeUndefined();
    expect(read(at.query("continued"))).toBeUndefined();
    at.place(FIRST);
    expect(read(at.query("first", { sessionId: `../${FIRST}` }))).toBeUndefined();
    expect(read(at.query("first", { sessionId: "not-a-uuid" }))).toBeUndefined();
  });

  it("reads past a torn last line", () => {
    const at = layout();
    const file = at.place(FIRST);
    appendFileSync(file, `{"parentUuid":"x","isSidechain":false,"type":"user","message":{"role":"user","content":"And its ra`);
    expect(read(at.query("first", { sessionId: FIRST }))).toEqual({ file, turns: FIRST_TURNS });
  });

  it("is none for a file of a shape it does not know", () => {
    const at = layout();
    at.place(FIRST, { text: "not json at all\n" });
    expect(read(at.query("first", { sessionId: FIRST }))).toBeUndefined();
    at.place(FIRST, { text: `${JSON.stringify({ role: "user", content: "Which colour?", time: RUNS.first.started })}\n` });
    expect(read(at.query("first", { sessionId: FIRST }))).toBeUndefined();
    expect(read(at.query("continued"))).toBeUndefined();
  });

  it("is none for what is not a regular file where the session file should be: a pipe, a folder, a link to elsewhere", () => {
    const pipe = layout();
    mkdirSync(pipe.folder, { recursive: true });
    expect(spawnSync("mkfifo", [join(pipe.folder, `${FIRST}.jsonl`)]).status).toBe(0);
    const started = Date.now();
    expect(read(pipe.query("first", { sessionId: FIRST }))).toBeUndefined();
    expect(read(pipe.query("continued"))).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(1000);
    const folder = layout();
    mkdirSync(join(folder.folder, `${FIRST}.jsonl`), { recursive: true });
    expect(read(folder.query("first", { sessionId: FIRST }))).toBeUndefined();
    const linked = layout();
    const real = linked.place(FIRST, { folder: join(dirname(linked.cwd), "elsewhere") });
    mkdirSync(linked.folder, { recursive: true });
    symlinkSync(real, join(linked.folder, `${FIRST}.jsonl`));
    expect(read(linked.query("first", { sessionId: FIRST }))).toBeUndefined();
    expect(read(linked.query("continued"))).toBeUndefined();
  });

  it("passes over hostile entries without a throw: wrong types, a huge line, deep nesting", () => {
    const at = layout();
    const base = { sessionId: FIRST, cwd: at.cwd, isSidechain: false, timestamp: "2026-12-02T00:42:11.000Z" };
    const hostile = [
      { ...base, type: "user", message: { role: "user", content: 42 } },
      { ...base, type: "user", message: "not a message" },
      { ...base, type: "assistant", message: { role: "assistant", content: [null, 7, "text", { type: "text", text: { nested: true } }] } },
      { ...base, type: "assistant", message: { role: "assistant", content: [{ type: "tool_use", name: 12, input: "rm -rf /" }] } },
      { ...base, type: "assistant", message: { role: "assistant", content: [{ type: "tool_use", name: "Bash", input: [] }] } },
      { ...base, type: "user", timestamp: 1796171531000, message: { role: "user", content: "a time that is a number" } },
      { ...base, type: "user", timestamp: "yesterday", message: { role: "user", content: "a time that is no time" } },
      { ...base, type: ["user"], message: { role: "user", content: "a type that is a list" } },
    ].map((entry) => JSON.stringify(entry));
    const huge = JSON.stringify({ ...base, type: "user", message: { role: "user", content: "x".repeat(3_000_000) } }).slice(0, -2);
    const deep = `${"[".repeat(200_000)}${"]".repeat(200_000)}`;
    const text = `${sessionText(FIRST, at.cwd, at.config)}${hostile.join("\n")}\n${huge}\n${deep}\n`;
    const file = at.place(FIRST, { text });
    expect(read(at.query("first", { sessionId: FIRST }))).toEqual({ file, turns: [...FIRST_TURNS, { role: "tool", text: "Bash" }] });
  });

  it("names each tool call on one line of at most 200 characters, its target's path from the working directory", () => {
    const at = layout();
    const call = (input: Record<string, unknown>, name = "Bash"): string =>
      JSON.stringify({
        sessionId: FIRST,
        cwd: at.cwd,
        isSidechain: false,
        timestamp: "2026-12-02T00:42:11.000Z",
        type: "assistant",
        message: { role: "assistant", model: "claude-loopback", content: [{ type: "tool_use", id: "toolu_x", name, input }] },
      });
    const lines = [
      call({ command: `npm test -- --grep "${"lighthouse ".repeat(40)}"\n  && echo done` }),
      call({ file_path: join(at.cwd, "src", "app.ts"), old_string: "a", new_string: "b" }, "Edit"),
      call({ file_path: "/etc/hosts" }, "Read"),
      call({ pattern: "saffron", path: at.cwd }, "Grep"),
      call({ todos: [] }, "TodoWrite"),
    ];
    const file = at.place(FIRST, { text: `${sessionText(FIRST, at.cwd, at.config)}${lines.join("\n")}\n` });
    const turns = read(at.query("first", { sessionId: FIRST }))!.turns.slice(FIRST_TURNS.length);
    const long = `Bash: npm test -- --grep "${"lighthouse ".repeat(40)}" && echo done`;
    expect(turns).toEqual([
      { role: "tool", text: `${long.slice(0, 199)}…` },
      { role: "tool", text: "Edit: src/app.ts" },
      { role: "tool", text: "Read: /etc/hosts" },
      { role: "tool", text: "Grep: saffron" },
      { role: "tool", text: "TodoWrite" },
    ]);
    expect(turns[0]!.text).toHaveLength(200);
    expect(file).toBe(join(at.folder, `${FIRST}.jsonl`));
  });
});
