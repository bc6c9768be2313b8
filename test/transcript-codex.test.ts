import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterEach, beforeAll, describe, expect, it } from "vitest";

import type { TranscriptQuery, Turn } from "../core/index.js";
import { loadManifestFile } from "../core/registry/manifest.js";
import { openProvider, type HookProblem, type ProviderHooks } from "../core/registry/provider.js";
import { fixtures, root } from "./helpers.js";

// Codex CLI's transcript hook, through the built-in manifest and its compiled adapter, on account folders laid out as
// the real Codex 0.171.0 lays them out, with the rollout files it wrote (test/fixtures/transcripts/codex/README.md).

const NEW = "rollout-2026-12-02T00-36-05-01a2342e-1593-7830-97d3-f4072df35120.jsonl";
const NEW_ID = "01a2342e-1593-7830-97d3-f4072df35120";
const NEW_RUN = { started: "2026-12-02T00:36:04.436Z", ended: "2026-12-02T00:36:11.700Z" };
const NEW_PROMPT = "Which colour is the lighthouse on the north pier? Please check with a command.";
// written under TZ=America/Los_Angeles: its folder is the local date, a day before the UTC one
const RESUMED = "rollout-2026-12-01T16-34-06-01a2342c-4614-7b51-92d7-430cfbfd60d6.jsonl";
const FIRST_RUN = { started: "2026-12-02T00:34:05.650Z", ended: "2026-12-02T00:34:17.672Z" };
const RESUME_RUN = { started: "2026-12-02T00:34:43.746Z", ended: "2026-12-02T00:34:51.013Z" };
const PARENT = "rollout-2026-12-02T00-35-43-01a2342d-bfd5-77d0-86d2-cb0a3f75ce55.jsonl";
const CHILD = "rollout-2026-12-02T00-35-44-01a2342d-c542-7473-ac0e-3778e249b411.jsonl";
const SPAWN_RUN = { started: "2026-12-02T00:35:42.426Z", ended: "2026-12-02T00:35:49.690Z" };
const CWD = "/home/user/project";

const ANSWER: Turn = { role: "agent", text: "The saffron lighthouse stands nineteen metres tall." };
const COMMAND: Turn = { role: "tool", text: "exec: echo lighthouse-tool-output" };
const REFUSED: Turn = { role: "user", text: "Now refuse this one please" };
const NEW_TURNS: Turn[] = [{ role: "user", text: NEW_PROMPT }, COMMAND, ANSWER, REFUSED];
const FIRST_TURNS: Turn[] = [{ role: "user", text: "Which colour is the lighthouse on the north pier?" }, COMMAND, ANSWER, REFUSED];

let hooks: ProviderHooks;
const problems: HookProblem[] = [];
let scratch: string;

beforeAll(async () => {
  const record = await loadManifestFile(join(root, "manifests", "codex.json"), "built-in");
  hooks = await openProvider(record, { report: (problem) => problems.push(problem) });
});

afterEach(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  expect(problems).toEqual([]);
});

function home(): string {
  scratch = mkdtempSync(join(tmpdir(), "uuldana-codex-transcript-"));
  return join(scratch, "codex-home");
}

const fixture = (name: string): string => readFileSync(join(fixtures, "transcripts", "codex", name), "utf8");

// A rollout file where Codex puts it: sessions/YYYY/MM/DD/ of the date in its name.
function place(codexHome: string, name: string, text = fixture(name)): string {
  const [, year, month, day] = /^rollout-(\d{4})-(\d{2})-(\d{2})T/.exec(name)!;
  const folder = join(codexHome, "sessions", year!, month!, day!);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, name), text);
  return join(folder, name);
}

function query(codexHome: string, run: { started: string; ended: string }, more: Partial<TranscriptQuery> = {}): TranscriptQuery {
  return { cwd: CWD, env: { HOME: join(scratch, "home"), CODEX_HOME: codexHome }, started: new Date(run.started), ended: new Date(run.ended), sessionId: undefined, prompt: undefined, ...more };
}

// The same session under another id (its file name and its meta), as a second session that fits equally.
function twin(name: string, id: string, newId: string): [string, string] {
  return [name.replace(id, newId), fixture(name).replaceAll(id, newId)];
}

describe("Codex CLI's transcript", () => {
  it("is the rollout file that began in the run's folder during the run, its first user turn the prompt", () => {
    const codexHome = home();
    const file = place(codexHome, NEW);
    expect(hooks.transcript(query(codexHome, NEW_RUN, { prompt: NEW_PROMPT }))).toEqual({ file, turns: NEW_TURNS });
    expect(hooks.transcript(query(codexHome, NEW_RUN))).toEqual({ file, turns: NEW_TURNS });
  });

  it("is found when the run's folder is reached through a link, which Codex records resolved", () => {
    const codexHome = home();
    const project = join(scratch, "project");
    mkdirSync(project);
    symlinkSync(project, join(scratch, "link"));
    // as Codex records it: the real path (a temporary folder may itself lie under a link)
    const file = place(codexHome, NEW, fixture(NEW).replaceAll(CWD, realpathSync(project)));
    expect(hooks.transcript(query(codexHome, NEW_RUN, { cwd: join(scratch, "link") }))).toEqual({ file, turns: NEW_TURNS });
  });

  it("is found by the session id when uuldana has one, and only then by it", () => {
    const codexHome = home();
    const file = place(codexHome, NEW);
    expect(hooks.transcript(query(codexHome, NEW_RUN, { sessionId: NEW_ID, cwd: "/home/user/elsewhere" }))).toEqual({ file, turns: NEW_TURNS });
    expect(hooks.transcript(query(codexHome, NEW_RUN, { sessionId: "01a2342e-0000-7000-8000-000000000000" }))).toBeUndefined();
  });

  it("is found in the folder of the CLI's local date, not the UTC one", () => {
    const codexHome = home();
    const file = place(codexHome, RESUMED);
    expect(file).toContain(join("sessions", "2026", "12", "01"));
    expect(hooks.transcript(query(codexHome, FIRST_RUN, { prompt: "Which colour is the lighthouse on the north pier?" }))).toEqual({ file, turns: FIRST_TURNS });
  });

  it("of a run resumed in an earlier session's file is only what was written during that run", () => {
    const codexHome = home();
    const file = place(codexHome, RESUMED);
    place(codexHome, NEW);
    const resumed = [{ role: "user", text: "And how tall is the lighthouse?" }, ANSWER];
    expect(hooks.transcript(query(codexHome, RESUME_RUN))).toEqual({ file, turns: resumed });
    expect(hooks.transcript(query(codexHome, RESUME_RUN, { prompt: "And how tall is the lighthouse?" }))).toEqual({ file, turns: resumed });
    expect(hooks.transcript(query(codexHome, RESUME_RUN, { prompt: "Which colour is the lighthouse on the north pier?" }))).toBeUndefined();
  });

  it("is never a sub-agent's thread, which Codex writes beside it with the same folder", () => {
    const codexHome = home();
    const file = place(codexHome, PARENT);
    place(codexHome, CHILD);
    const turns = [{ role: "user", text: "Which colour is the lighthouse on the north pier?" }, { role: "tool", text: "spawn_agent: pier_count" }, ANSWER];
    expect(hooks.transcript(query(codexHome, SPAWN_RUN))).toEqual({ file, turns });
  });

  it("is never a session that began earlier or later, nor one in another folder", () => {
    const codexHome = home();
    const parent = place(codexHome, PARENT);
    const file = place(codexHome, NEW);
    place(codexHome, RESUMED);
    expect(hooks.transcript(query(codexHome, NEW_RUN))?.file).toBe(file);
    expect(hooks.transcript(query(codexHome, SPAWN_RUN))?.file).toBe(parent);
    expect(hooks.transcript(query(codexHome, NEW_RUN, { cwd: "/home/user/other" }))).toBeUndefined();
    expect(hooks.transcript(query(codexHome, { started: "2026-12-02T00:40:00Z", ended: "2026-12-02T00:41:00Z" }))).toBeUndefined();
  });

  it("is no file at all when two fit equally, unless the prompt tells them apart or one is a codex exec run", () => {
    const codexHome = home();
    const file = place(codexHome, NEW);
    const [name, text] = twin(NEW, NEW_ID, "01a2342e-1593-7830-97d3-aaaaaaaaaaaa");
    place(codexHome, name, text);
    expect(hooks.transcript(query(codexHome, NEW_RUN))).toBeUndefined();
    expect(hooks.transcript(query(codexHome, NEW_RUN, { prompt: NEW_PROMPT }))).toBeUndefined();
    place(codexHome, name, text.replaceAll("Please check with a command.", "Please look it up."));
    expect(hooks.transcript(query(codexHome, NEW_RUN, { prompt: NEW_PROMPT }))).toEqual({ file, turns: NEW_TURNS });
    // a codex exec the agent ran in the same folder is not an interactive session of its own
    place(codexHome, name, text.replace('"source":"cli"', '"source":"exec"'));
    expect(hooks.transcript(query(codexHome, NEW_RUN))).toEqual({ file, turns: NEW_TURNS });
  });

  it("is read from the run's own account: CODEX_HOME, else ~/.codex under the run's HOME, never another", () => {
    const codexHome = home();
    const userHome = join(scratch, "home");
    const file = place(join(userHome, ".codex"), NEW);
    expect(hooks.transcript(query(codexHome, NEW_RUN))).toBeUndefined();
    expect(hooks.transcript({ ...query(codexHome, NEW_RUN), env: { HOME: userHome } })).toEqual({ file, turns: NEW_TURNS });
    expect(hooks.transcript({ ...query(codexHome, NEW_RUN), env: {} })).toBeUndefined();
  });

  it("is not a file last written before the run began", () => {
    const codexHome = home();
    const file = place(codexHome, NEW);
    const before = new Date(NEW_RUN.started).getTime() / 1000 - 60;
    utimesSync(file, before, before);
    expect(hooks.transcript(query(codexHome, NEW_RUN))).toBeUndefined();
  });

  it("goes without a line torn by Codex's writing, and is nothing for a missing folder, another format or no regular file", () => {
    const codexHome = home();
    expect(hooks.transcript(query(codexHome, NEW_RUN))).toBeUndefined();
    const text = fixture(NEW);
    const torn = text.slice(0, text.indexOf('"text":"Now refuse this one please"') + 20);
    const file = place(codexHome, NEW, torn);
    expect(hooks.transcript(query(codexHome, NEW_RUN))).toEqual({ file, turns: NEW_TURNS.slice(0, 3) });
    place(codexHome, NEW, text.split("\n").slice(1).join("\n"));
    expect(hooks.transcript(query(codexHome, NEW_RUN))).toBeUndefined();
    place(codexHome, NEW, '{"type":"session_meta","payload":{"id":7,"cwd":"/home/user/project"}}\n');
    expect(hooks.transcript(query(codexHome, NEW_RUN))).toBeUndefined();
  });

  it("never waits on a FIFO nor follows a link put where a rollout file or a date folder was", () => {
    const codexHome = home();
    const real = place(join(scratch, "elsewhere"), NEW);
    const folder = join(codexHome, "sessions", "2026", "12", "02");
    mkdirSync(folder, { recursive: true });
    execFileSync("mkfifo", [join(folder, "rollout-2026-12-02T00-36-06-fifo.jsonl")]);
    symlinkSync(real, join(folder, NEW));
    expect(hooks.transcript(query(codexHome, NEW_RUN))).toBeUndefined();
    rmSync(join(codexHome, "sessions"), { recursive: true });
    mkdirSync(join(codexHome, "sessions", "2026", "12"), { recursive: true });
    symlinkSync(join(scratch, "elsewhere", "sessions", "2026", "12", "02"), join(codexHome, "sessions", "2026", "12", "02"));
    expect(hooks.transcript(query(codexHome, NEW_RUN))).toBeUndefined();
  });

  it("passes over entries of the wrong types, deep nesting and a huge line, keeping the rest", () => {
    const codexHome = home();
    const [meta, ...rest] = fixture(NEW).split("\n");
    const at = '"timestamp":"2026-12-02T00:36:06.000Z"';
    const hostile = [
      `{${at},"type":"response_item","payload":{"type":"message","role":"user","content":"not a list"}}`,
      `{${at},"type":"response_item","payload":{"type":"message","role":5,"content":[{"type":"input_text","text":"no role"}]}}`,
      `{${at},"type":"response_item","payload":[1,2]}`,
      `{${at},"type":"response_item","payload":{"type":"function_call","name":{"x":1},"arguments":"{"}}`,
      `{${at},"type":"response_item","payload":{"type":"custom_tool_call","name":"exec","input":42}}`,
      `{"timestamp":7,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"no time"}]}}`,
      `${"[".repeat(200_000)}${"]".repeat(200_000)}`,
      `{${at},"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"${"x".repeat(2_000_000)}"}]}}`.slice(0, 1_500_000),
    ];
    const file = place(codexHome, NEW, [meta, ...hostile, ...rest].join("\n"));
    expect(hooks.transcript(query(codexHome, NEW_RUN))).toEqual({ file, turns: NEW_TURNS });
  });

  it("leaves out what Codex itself puts in the user's role: AGENTS.md, its context blocks, parts it marks as not the user's", () => {
    const codexHome = home();
    const [meta, ...rest] = fixture(NEW).split("\n");
    const user = (parts: string[], provenance?: string[]): string =>
      JSON.stringify({
        timestamp: "2026-12-02T00:36:05.200Z",
        type: "response_item",
        payload: {
          type: "message",
          role: "user",
          content: parts.map((text) => ({ type: "input_text", text })),
          ...(provenance && { internal_chat_message_metadata_passthrough: { content_item_metadata: provenance.map((type) => ({ provenance: { type } })) } }),
        },
      });
    const injected = [
      // as 0.171.0 writes a project's AGENTS.md, with the folder's context in the same message
      user([`# AGENTS.md instructions for ${CWD}\n\n<INSTRUCTIONS>\n# Harbour rules\nAlways name the pier.\n\n</INSTRUCTIONS>`, "<environment_context>\n  <cwd>/home/user/project</cwd>\n</environment_context>"], ["agents_md", "harness"]),
      // as older versions write them, without provenance
      user(["<user_instructions>\nBe brief.\n</user_instructions>"]),
      user(["<turn_aborted>\nThe user interrupted the previous turn.\n</turn_aborted>"]),
      // a block of a kind not known here, which Codex marks as its own
      user(["<harbour_state>\ncalm\n</harbour_state>"], ["harness"]),
    ];
    const file = place(codexHome, NEW, [meta, ...injected, ...rest].join("\n"));
    expect(hooks.transcript(query(codexHome, NEW_RUN, { prompt: NEW_PROMPT }))).toEqual({ file, turns: NEW_TURNS });
  });

  it("gives each tool call one line, the command or the files, as Codex's shell, patch and script tools record them", () => {
    const codexHome = home();
    const [meta, ...rest] = fixture(NEW).split("\n");
    const item = (payload: object): string => JSON.stringify({ timestamp: "2026-12-02T00:36:10.000Z", type: "response_item", payload });
    const calls = [
      item({ type: "function_call", name: "shell", arguments: JSON.stringify({ command: ["bash", "-lc", "npm test"], workdir: CWD }), call_id: "c1" }),
      item({ type: "function_call_output", call_id: "c1", output: "12 passed" }),
      item({ type: "custom_tool_call", name: "apply_patch", input: "*** Begin Patch\n*** Update File: src/app.ts\n@@\n-a\n+b\n*** Add File: src/new.ts\n+x\n*** End Patch", call_id: "c2" }),
      item({ type: "local_shell_call", call_id: "c3", status: "completed", action: { type: "exec", command: ["ls", "-la"] } }),
      item({ type: "function_call", name: "exec_command", arguments: JSON.stringify({ cmd: `grep -rn ${"needle ".repeat(60)}` }), call_id: "c4" }),
      item({ type: "custom_tool_call", name: "exec", input: "// @exec: {\"yield_time_ms\": 1000}\nconst files = await tools.list_files({});\ntext(files);", call_id: "c5" }),
      item({ type: "web_search_call", status: "completed", action: { type: "search", query: "harbour lighthouse colour" } }),
      item({ type: "reasoning", summary: [{ type: "summary_text", text: "thinking" }], encrypted_content: "abc" }),
    ];
    const file = place(codexHome, NEW, [meta, ...rest.filter(Boolean), ...calls, ""].join("\n"));
    expect(hooks.transcript(query(codexHome, NEW_RUN))).toEqual({
      file,
      turns: [
        ...NEW_TURNS,
        { role: "tool", text: "shell: npm test" },
        { role: "tool", text: "apply_patch: src/app.ts, src/new.ts" },
        { role: "tool", text: "shell: ls -la" },
        { role: "tool", text: `exec_command: grep -rn ${"needle ".repeat(60)}`.slice(0, 199) + "…" },
        { role: "tool", text: "exec: list_files" },
        { role: "tool", text: "web_search: harbour lighthouse colour" },
      ],
    });
  });
});
