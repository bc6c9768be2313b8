import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import type { ProviderAdapter, TranscriptQuery, Turn } from "../core/index.js";
import { loadManifestFile } from "../core/registry/manifest.js";
import { openProvider } from "../core/registry/provider.js";
import { fixtures, root } from "./helpers.js";

// Gemini CLI's own chat records, read by the built adapter from a home laid out as the real CLI 0.61.0 lays it out
// (test/fixtures/transcripts/gemini/README.md says how the files were captured).

const gemini = ((await import(pathToFileURL(join(root, "dist", "providers", "gemini.js")).href)) as { default: ProviderAdapter }).default;
const read = (query: TranscriptQuery): ReturnType<NonNullable<ProviderAdapter["transcript"]>> => gemini.transcript!(query);

const ID = "6fbc063d-3470-45bc-9b44-5d6be0a39c99";
const FRESH = "session-2026-12-02T00-39-6fbc063d.jsonl";
const EMPTY = "session-2026-12-02T00-40-6fbc063d.jsonl";
const PROMPTED = "session-2026-12-02T00-37-a038a05b.jsonl";
const PROMPT = "Continue this conversation.\n\nThe user asked: What does the harbour note say\n  (indented line)";
// each captured run's start and end, as uuldana would have told the hook
const RUNS = {
  fresh: { started: new Date("2026-12-02T00:39:37.475Z"), ended: new Date("2026-12-02T00:39:53.993Z") },
  resumed: { started: new Date("2026-12-02T00:39:57.045Z"), ended: new Date("2026-12-02T00:40:14.224Z") },
  prompted: { started: new Date("2026-12-02T00:37:42.152Z"), ended: new Date("2026-12-02T00:37:56.310Z") },
};

const TOOL: Turn = { role: "tool", text: "ReadFile: harbour.txt" };
const ANSWER: Turn = { role: "agent", text: "The note says the saffron lighthouse stands on the north pier." };
const REFUSED: Turn = { role: "user", text: "And when was the lighthouse built" };
const FRESH_TURNS: Turn[] = [{ role: "user", text: "What does the harbour note say" }, TOOL, ANSWER, REFUSED];
const RESUMED_TURNS: Turn[] = [{ role: "user", text: "Which pier is the lighthouse on" }, TOOL, ANSWER, REFUSED];
const PROMPTED_TURNS: Turn[] = [{ role: "user", text: PROMPT }, TOOL, ANSWER, REFUSED];

let scratch: string;
let home: string;
let cwd: string;
let chats: string;

// A home whose .gemini holds the registry and the project's folder, as the CLI leaves them after a run in cwd.
function layHome(at: string, project: string): string {
  mkdirSync(join(at, ".gemini", "tmp", "project", "chats"), { recursive: true });
  writeFileSync(join(at, ".gemini", "projects.json"), JSON.stringify({ projects: { [project]: "project" } }, null, 2));
  writeFileSync(join(at, ".gemini", "tmp", "project", ".project_root"), project);
  return join(at, ".gemini", "tmp", "project", "chats");
}

// A captured file with its paths and project hash made this test's.
function captured(folder: string, name: string, project = cwd): string {
  return readFileSync(join(fixtures, "transcripts", "gemini", folder, name), "utf8")
    .replaceAll("/home/user/project", project)
    .replaceAll("/home/user", home)
    .replaceAll(sha256("/home/user/project"), sha256(project));
}

function put(name: string, text: string, folder = chats): string {
  writeFileSync(join(folder, name), text);
  return join(folder, name);
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

function query(run: keyof typeof RUNS, more: Partial<TranscriptQuery> = {}): TranscriptQuery {
  return { cwd, env: { HOME: home }, ...RUNS[run], sessionId: undefined, prompt: undefined, ...more };
}

// One more message line, as the CLI writes one.
const line = (record: object): string => `${JSON.stringify(record)}\n`;

beforeEach(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "uuldana-gemini-transcript-")));
  home = join(scratch, "home");
  cwd = join(scratch, "project");
  mkdirSync(cwd);
  chats = layHome(home, cwd);
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

describe("Gemini CLI's transcript", () => {
  it("is the file named by the session id uuldana gave, with its turns: tool calls on one line, thoughts and notices left out", () => {
    const file = put(FRESH, captured("fresh", FRESH));
    expect(read(query("fresh", { sessionId: ID }))).toEqual({ file, turns: FRESH_TURNS });
  });

  it("is read from GEMINI_CLI_HOME when the entry sets it, never from HOME", () => {
    const account = join(scratch, "account");
    const file = put(FRESH, captured("fresh", FRESH), layHome(account, cwd));
    expect(read(query("fresh", { sessionId: ID, env: { HOME: home, GEMINI_CLI_HOME: account } }))).toEqual({ file, turns: FRESH_TURNS });
    // the file is under HOME only: another account's folder is not read
    rmSync(account, { recursive: true });
    put(FRESH, captured("fresh", FRESH));
    expect(read(query("fresh", { sessionId: ID, env: { HOME: home, GEMINI_CLI_HOME: account } }))).toBeUndefined();
    // no account folder in the run's environment: nothing, whatever uuldana's own HOME is
    expect(read(query("fresh", { sessionId: ID, env: {} }))).toBeUndefined();
  });

  it("without a session id is the one file of the folder with messages written during the run", () => {
    const file = put(FRESH, captured("resumed", FRESH));
    put(EMPTY, captured("resumed", EMPTY));
    expect(read(query("resumed"))).toEqual({ file, turns: RESUMED_TURNS });
  });

  it("of a resumed session holds only what was written during this run; by id, only the first run's part", () => {
    const file = put(FRESH, captured("resumed", FRESH));
    put(EMPTY, captured("resumed", EMPTY));
    expect(read(query("fresh", { sessionId: ID }))).toEqual({ file, turns: FRESH_TURNS });
    expect(read(query("resumed"))?.turns).toEqual(RESUMED_TURNS);
  });

  it("without a session id begins with the run's first prompt, when it had one", () => {
    const file = put(PROMPTED, captured("prompted", PROMPTED));
    expect(read(query("prompted", { prompt: PROMPT }))).toEqual({ file, turns: PROMPTED_TURNS });
    expect(read(query("prompted", { prompt: "Another first prompt" }))).toBeUndefined();
    expect(read(query("prompted"))).toEqual({ file, turns: PROMPTED_TURNS });
  });

  it("is never a file that fits as well as another: two sessions written during the run are undefined, unless the prompt tells them apart", () => {
    const file = put(PROMPTED, captured("prompted", PROMPTED));
    const other = captured("prompted", PROMPTED).replaceAll("a038a05b-", "b1c2d3e4-").replace("Continue this conversation.", "Another session.");
    put("session-2026-12-02T00-37-b1c2d3e4.jsonl", other);
    expect(read(query("prompted"))).toBeUndefined();
    expect(read(query("prompted", { prompt: PROMPT }))).toEqual({ file, turns: PROMPTED_TURNS });
  });

  it("is never another folder's session, nor one written before or after the run", () => {
    // the same folder of records, a session of another working folder (its project hash is not this one's)
    put(FRESH, captured("fresh", FRESH, join(scratch, "elsewhere")));
    expect(read(query("fresh", { sessionId: ID }))).toBeUndefined();
    expect(read(query("fresh"))).toBeUndefined();
    // this folder's session, but the run was earlier or later
    put(FRESH, captured("fresh", FRESH));
    const hour = 3600_000;
    const at = (shift: number): Partial<TranscriptQuery> => ({ started: new Date(RUNS.fresh.started.getTime() + shift), ended: new Date(RUNS.fresh.ended.getTime() + shift) });
    expect(read(query("fresh", { sessionId: ID, ...at(-hour) }))).toBeUndefined();
    expect(read(query("fresh", { sessionId: ID, ...at(hour) }))).toBeUndefined();
    // another session id
    expect(read(query("fresh", { sessionId: "6fbc063d-0000-4000-8000-000000000000" }))).toBeUndefined();
    // another working folder: its own project folder holds nothing
    const there = join(scratch, "there");
    mkdirSync(there);
    expect(read(query("fresh", { sessionId: ID, cwd: there }))).toBeUndefined();
  });

  it("is found by the folder's .project_root when the registry is lost, and under the older folder named by the hash", () => {
    const file = put(FRESH, captured("fresh", FRESH));
    rmSync(join(home, ".gemini", "projects.json"));
    expect(read(query("fresh", { sessionId: ID }))).toEqual({ file, turns: FRESH_TURNS });
    rmSync(join(home, ".gemini", "tmp"), { recursive: true });
    const hashed = join(home, ".gemini", "tmp", sha256(cwd), "chats");
    mkdirSync(hashed, { recursive: true });
    expect(read(query("fresh", { sessionId: ID }))).toBeUndefined();
    const older = put(FRESH, captured("fresh", FRESH), hashed);
    expect(read(query("fresh", { sessionId: ID }))).toEqual({ file: older, turns: FRESH_TURNS });
  });

  it("reads an older version's file, one JSON object with all messages", () => {
    const records = captured("fresh", FRESH).trim().split("\n").map((text) => JSON.parse(text) as Record<string, unknown>);
    const messages = new Map(records.filter((record) => typeof record.id === "string").map((record) => [record.id, record]));
    const file = put("session-2026-12-02T00-39-6fbc063d.json", JSON.stringify({ ...records[0], messages: [...messages.values()] }, null, 2));
    expect(read(query("fresh"))).toEqual({ file, turns: FRESH_TURNS });
  });

  it("leaves out notices, errors, warnings, slash commands and a rewound part, and writes a failed tool call on one bounded line", () => {
    const at = (seconds: number): string => new Date(Date.parse("2026-12-02T00:39:48Z") + seconds * 1000).toISOString();
    const command = `npm test -- ${"--reporter verbose ".repeat(20)}`.trim();
    const more = [
      { id: "e1", timestamp: at(0), type: "error", content: "You have exhausted your daily quota on this model." },
      { id: "w1", timestamp: at(0), type: "warning", content: "Warning: tools.exclude in settings.json is deprecated" },
      { id: "u1", timestamp: at(1), type: "user", content: [{ text: "/stats model" }] },
      { id: "u2", timestamp: at(2), type: "user", content: [{ text: "Run the tests @notes.md\n--- notes.md ---\nthe notes" }], displayContent: [{ text: "Run the tests @notes.md" }] },
      { id: "g1", timestamp: at(3), type: "gemini", content: [{ text: "Thinking hard", thought: true }, { text: "Running them." }], toolCalls: [{ id: "c1", name: "run_shell_command", displayName: "Shell", args: { command: `${command}\nsecond line` }, status: "error", result: [{ text: "1 failed" }] }, { id: "c2", name: "mcp_notes_lookup", args: { topic: 7 }, description: "lookup notes" }] },
      { id: "u3", timestamp: at(4), type: "user", content: [{ text: "Forget this" }] },
      { id: "g2", timestamp: at(5), type: "gemini", content: "Forgotten." },
      { $rewindTo: "u3" },
    ];
    const file = put(FRESH, captured("fresh", FRESH) + more.map(line).join(""));
    const shell = `Shell: ${command}`.slice(0, 200 - " (error)".length - 1) + "… (error)";
    expect(read(query("fresh", { sessionId: ID }))).toEqual({
      file,
      turns: [...FRESH_TURNS, { role: "user", text: "Run the tests @notes.md" }, { role: "agent", text: "Running them." }, { role: "tool", text: shell }, { role: "tool", text: "mcp_notes_lookup: lookup notes" }],
    });
    expect(shell.length).toBe(200);
  });

  it("skips a torn last line and hostile entries, and is undefined for a query or a file of another shape", () => {
    const whole = captured("fresh", FRESH);
    const cut = whole.indexOf('{"id":"d72adffb');
    const file = put(FRESH, `${whole.slice(0, cut)}{"id":"d72adffb-a557-4ff9-ba50-ac0205ffb597","timestamp":"2026-12-02T00:3`);
    expect(read(query("fresh", { sessionId: ID }))).toEqual({ file, turns: FRESH_TURNS.slice(0, 3) });
    const hostile = [
      "[".repeat(200_000) + "]".repeat(200_000),
      `{"id":"x1","timestamp":"2026-12-02T00:39:44Z","type":"user","content":"${"a".repeat(3_000_000)}`,
      line({ id: "x2", timestamp: 7, type: "user", content: [{ text: "no time" }] }),
      line({ id: "x3", timestamp: "2026-12-02T00:39:44Z", type: ["user"], content: [{ text: "no type" }] }),
      line({ id: "x4", timestamp: "2026-12-02T00:39:44Z", type: "gemini", content: 5, toolCalls: "ReadFile" }),
      line({ id: "x5", timestamp: "2026-12-02T00:39:44Z", type: "gemini", content: [null, 3, { text: 4 }], toolCalls: [null, { name: 9 }, { name: "x".repeat(500) }] }),
      line({ $set: "x" }),
      line({ $rewindTo: 5 }),
      line([1, 2]),
    ];
    put(FRESH, `${whole}\n${hostile.join("\n")}\n`);
    expect(read(query("fresh", { sessionId: ID }))?.turns).toEqual(FRESH_TURNS);
    for (const wrong of [undefined, "a query", { ...query("fresh"), env: undefined }, { ...query("fresh"), started: "today" }, { ...query("fresh"), prompt: 3 }]) {
      expect(read(wrong as unknown as TranscriptQuery)).toBeUndefined();
    }
    put(FRESH, "not JSON at all\n");
    expect(read(query("fresh", { sessionId: ID }))).toBeUndefined();
    put(FRESH, line({ type: "user", content: "no id" }) + line({ projects: {} }));
    expect(read(query("fresh", { sessionId: ID }))).toBeUndefined();
    put(FRESH, "");
    expect(read(query("fresh", { sessionId: ID }))).toBeUndefined();
    rmSync(join(chats, FRESH));
    expect(read(query("fresh", { sessionId: ID }))).toBeUndefined();
  });

  it("never reads a pipe, a link to a file elsewhere or a folder linked elsewhere", () => {
    const fifo = spawnSync("mkfifo", [join(chats, FRESH)]);
    expect(fifo.status).toBe(0);
    const started = Date.now();
    expect(read(query("fresh", { sessionId: ID }))).toBeUndefined();
    expect(Date.now() - started).toBeLessThan(2000);
    rmSync(join(chats, FRESH));
    const elsewhere = join(scratch, "elsewhere.jsonl");
    writeFileSync(elsewhere, captured("fresh", FRESH));
    symlinkSync(elsewhere, join(chats, FRESH));
    expect(read(query("fresh", { sessionId: ID }))).toBeUndefined();
    const linked = join(scratch, "linked-chats");
    mkdirSync(linked);
    put(FRESH, captured("fresh", FRESH), linked);
    rmSync(chats, { recursive: true });
    symlinkSync(linked, chats);
    expect(read(query("fresh", { sessionId: ID }))).toBeUndefined();
  });

  it("is what a session gets from the built-in manifest's adapter, through the guarded hook", async () => {
    const file = put(FRESH, captured("fresh", FRESH));
    const record = await loadManifestFile(join(root, "manifests", "gemini.json"), "built-in");
    expect(record.manifest?.session_id).toEqual({ args: ["--session-id", "{id}"], unless: ["--resume", "-r", "--session-file", "--list-sessions", "--delete-session"] });
    const problems: unknown[] = [];
    const hooks = await openProvider(record, { report: (problem) => problems.push(problem) });
    expect(hooks.transcript(query("fresh", { sessionId: ID }))).toEqual({ file, turns: FRESH_TURNS });
    expect(problems).toEqual([]);
  });
});
