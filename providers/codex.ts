import { lstatSync, readdirSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";

import {
  defineProvider,
  filesIn,
  jsonLines,
  readFirstLine,
  readTranscriptFile,
  type FoundFile,
  type NativeQuota,
  type ProviderVerdict,
  type QuotaQuery,
  type Transcript,
  type TranscriptQuery,
  type Turn,
} from "../core/index.js";

// What Codex CLI draws, read from its version 0.171.0: the error it shows when the plan does not include Codex, the
// working line of a running turn, and its conversation (› the user's messages, • its answers and tool calls, ■ its
// errors), the composer and footer at the bottom left out. And what it records itself in its rollout file: the
// conversation, and the account's allowance as the API reported it.

// Codex's own lines are short: a longer line is the agent's text or a tool's output, and is not read
const LONGEST = 240;

// the plan does not include Codex: nothing resets, no turn can run (the error behind it is usage_not_included)
const NOT_INCLUDED = /^■ To use Codex with your ChatGPT plan, upgrade to [\w -]{1,20}/;

// a running turn: the working line above the composer, with its timer and how to interrupt it
// ("◦ Working (3s • esc to interrupt)")
const WORKING = /^[•◦] \S.{0,60} \(\d[^()]{0,30} • esc to interrupt\)(?: · .{1,80})?$/;

const USER = /^› (\S.*)$/;
const AGENT = /^• (\S.*)$/;
const ERROR = /^■ (\S.*)$/;
const CONTINUED = /^ {2,}(\S.*)$/;
// its notices and warnings, the end of a turn ("Worked for 9s • 16:58"), the footer and the model line under the
// composer, and notifications it aligns to the right
const NOTICE = /^⚠ /;
const WORKED = /^(?:─ )?Worked for [^•─]{1,20}(?: • \d{1,2}:\d{2})?(?: ─+)?$/;
const FOOTER = /^ {2}\S.{0,200}(?:\? for shortcuts|esc to interrupt|f2 to view|context left|← for agents)/;
const MODEL_LINE = /^ {2}\S[^·]{0,60} · [~/]/;
const RIGHT_ALIGNED = /^ {20,}\S/;

// The plan-excludes-Codex error. The general reader reads it as an account stop too; this names it as Codex's own and
// holds if the wording drifts from the general shapes.
function classify(text: string): ProviderVerdict | undefined {
  for (const line of text.split("\n", 400)) {
    const trimmed = line.trim();
    if (trimmed.length <= LONGEST && NOT_INCLUDED.test(trimmed)) return { stop: true, reason: `Codex says this plan does not include it ("${trimmed.slice(2)}")` };
  }
  return undefined;
}

// A turn is running: the working line stands just above the composer (the last line that begins with ›).
function busy(screen: readonly string[]): boolean {
  const composer = composerAt(screen);
  if (composer === -1) return false;
  for (let i = composer - 1, seen = 0; i >= 0 && seen < 4; i--) {
    const line = screen[i]!.trimEnd();
    if (!line) continue;
    seen++;
    if (line.length <= LONGEST && WORKING.test(line)) return true;
  }
  return false;
}

// Its turns: › begins the user's, • the agent's, ■ one of its errors; lines indented under them continue them. The
// composer (a › line with the footer under it), the working line, notices and the footer are not turns.
function conversation(screenText: string): Turn[] | undefined {
  const lines = screenText.split("\n").map((line) => line.trimEnd());
  const turns: { role: Turn["role"]; lines: string[] }[] = [];
  let open = false;
  let blank = false;
  const push = (text: string): void => {
    turns.at(-1)!.lines.push(...(blank ? ["", text] : [text]));
    blank = false;
  };
  lines.forEach((line, index) => {
    if (!line) {
      blank = open;
      return;
    }
    if (line.length > 2000 || RIGHT_ALIGNED.test(line) || NOTICE.test(line) || WORKING.test(line.slice(0, LONGEST))) return;
    if (FOOTER.test(line.slice(0, LONGEST)) || MODEL_LINE.test(line.slice(0, LONGEST)) || WORKED.test(line.trim())) {
      open = false;
      return;
    }
    const user = USER.exec(line);
    if (user) {
      if (isComposer(lines, index)) {
        open = false;
        return;
      }
      turns.push({ role: "user", lines: [user[1]!] });
      open = true;
      blank = false;
      return;
    }
    const agent = AGENT.exec(line) ?? ERROR.exec(line);
    if (agent) {
      // an answer goes on across its bullets (text, tool calls, their output) until the user speaks
      if (turns.at(-1)?.role === "agent") {
        blank = true;
        push(agent[1]!);
      } else turns.push({ role: "agent", lines: [agent[1]!] });
      open = true;
      blank = false;
      return;
    }
    const continued = CONTINUED.exec(line);
    if (continued && open) push(line.slice(2));
    else if (!continued) open = false;
  });
  return turns.length ? turns.map(({ role, lines }) => ({ role, text: lines.join("\n") })) : undefined;
}

// The composer: a › line whose next line with text is the footer or the model line under it.
function isComposer(lines: readonly string[], index: number): boolean {
  for (let i = index + 1; i < lines.length && i <= index + 4; i++) {
    const line = lines[i]!;
    if (!line) continue;
    return FOOTER.test(line.slice(0, LONGEST)) || MODEL_LINE.test(line.slice(0, LONGEST));
  }
  return true;
}

// Where the composer is on a screen: the last › line, if the footer follows it.
function composerAt(screen: readonly string[]): number {
  for (let i = screen.length - 1; i >= 0 && i >= screen.length - 30; i--) {
    if (USER.test(screen[i]!.trimEnd())) return isComposer(screen, i) ? i : -1;
  }
  return -1;
}

// --- its rollout files ---
// Codex writes each session to $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl (the date folders in
// the local time of the CLI's own zone), one JSON record a line: first the session's meta (its id, folder, start),
// then what the model saw as response items, among them the user's messages, its answers and its tool calls, and its
// own events beside them (token counts, errors, the limit), which repeat the messages and are not read. A resumed
// session goes on in the same file.

// how far before the run's start a session's start and its entries may lie (clocks read a moment apart: Codex cannot
// write before it is started, and a run resumed just after the last one ended must not take that one's end), and
// how far after its end; a file's time of last writing, which some file systems keep to the second or two, more
const EARLY_MS = 250;
const LATE_MS = 5000;
const WRITTEN_EARLY_MS = 5000;
const ROLLOUT = /^rollout-.{1,200}\.jsonl$/;
// the date folders walked at most, newest first: ten years of daily use
const MAX_FOLDERS = 4000;
// a tool call's one line
const TOOL_LINE = 200;
// the messages Codex itself puts in the user's role: the folder's context, AGENTS.md and skills, notices of an
// interrupted turn or a sub-agent, the user's own shell commands, hooks
const CONTEXT_PREFIXES = [
  "<environment_context",
  "<user_instructions",
  "# agents.md instructions",
  "<instructions>",
  "<skills_instructions",
  "<skill>",
  "<user_shell_command",
  "<turn_aborted",
  "<subagent_notification",
  "<context_update",
  "<hook_prompt",
  "<codex_internal_context",
  "<recommended_plugins",
  "<external_",
];

interface Rollout {
  file: string;
  id: string;
  cwd: string;
  startMs: number;
  // a sub-agent's thread or a non-interactive run, never the one uuldana started
  side: boolean;
  // the records written during the run, in order
  records: Record<string, unknown>[];
}

// What finds a run's own rollout file: the run as the transcript and quota hooks are told of it.
type RunQuery = Pick<TranscriptQuery, "cwd" | "env" | "started" | "sessionId">;

// How a rollout file is read: its meta and the records written between two times.
type RolloutReader = (file: string, from: number, to: number) => Rollout | undefined;

// The run's conversation from its rollout file: found by the session id when uuldana has one, else by the folder
// Codex ran in, the session's start within the run (or, resumed, entries written during it) and its first prompt.
function transcript(query: TranscriptQuery): Transcript | undefined {
  if (!isRecord(query) || !(query.ended instanceof Date)) return undefined;
  const fitting = ownRollouts(query, query.ended.getTime() + LATE_MS, query.prompt, readRollout, MAX_FOLDERS);
  if (fitting.length !== 1) return undefined;
  return { file: fitting[0]!.rollout.file, turns: fitting[0]!.turns };
}

// The rollout files that fit the run, with their turns: among those written since it began (in the newest date
// folders, at most maxFolders of them), the file of its session id, else those that fit its folder, its times (up to
// to) and its first prompt when there is one.
function ownRollouts(query: RunQuery, to: number, prompt: string | undefined, read: RolloutReader, maxFolders: number): { rollout: Rollout; turns: Turn[] }[] {
  if (!isRecord(query) || !isRecord(query.env) || !(query.started instanceof Date)) return [];
  const home = accountFolder(query.env);
  const from = query.started.getTime() - EARLY_MS;
  if (!home || !Number.isFinite(from) || Number.isNaN(to)) return [];
  // Codex records the folder it ran in with its links resolved
  const folders = new Set([query.cwd, realPath(query.cwd)]);
  const fitting: { rollout: Rollout; turns: Turn[] }[] = [];
  for (const { file } of writtenSince(join(home, "sessions"), query.started.getTime() - WRITTEN_EARLY_MS, query.sessionId, maxFolders)) {
    const rollout = read(file, from, to);
    if (!rollout) continue;
    const turns = turnsOf(rollout.records);
    if (query.sessionId ? rollout.id === query.sessionId : fits(rollout, turns, folders, prompt, from, to)) fitting.push({ rollout, turns });
  }
  return fitting;
}

// CODEX_HOME as the run had it, else its default under the run's HOME.
function accountFolder(env: Readonly<Record<string, unknown>>): string | undefined {
  if (typeof env.CODEX_HOME === "string" && env.CODEX_HOME) return env.CODEX_HOME;
  if (typeof env.HOME === "string" && env.HOME) return join(env.HOME, ".codex");
  return undefined;
}

// The rollout files written to since the run began, in the date folders, newest first, at most maxFolders of them (a
// resumed session's file lies in the folder of the day it began); folders that are links are not followed.
function writtenSince(sessions: string, since: number, id: string | undefined, maxFolders: number): FoundFile[] {
  const found: FoundFile[] = [];
  let folders = 0;
  for (const year of subfolders(sessions, /^\d{4}$/)) {
    for (const month of subfolders(year, /^\d{2}$/)) {
      for (const day of subfolders(month, /^\d{2}$/)) {
        if (++folders > maxFolders) return found;
        for (const file of filesIn(day, ROLLOUT)) {
          if (file.modifiedMs >= since && (!id || file.name.endsWith(`-${id}.jsonl`))) found.push(file);
        }
      }
    }
  }
  return found;
}

function subfolders(folder: string, name: RegExp): string[] {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return [];
  }
  return names
    .filter((entry) => name.test(entry))
    .sort()
    .reverse()
    .map((entry) => join(folder, entry))
    .filter((path) => {
      try {
        return lstatSync(path).isDirectory();
      } catch {
        return false;
      }
    });
}

// A rollout file's meta and the records written between from and to; undefined when its first line is not the
// session's meta (a file of another shape, or longer than the bound and read from its end).
function readRollout(file: string, from: number, to: number): Rollout | undefined {
  const text = readTranscriptFile(file);
  if (text === undefined) return undefined;
  const [first, ...rest] = jsonLines(text).filter(isRecord);
  return rolloutOf(file, first, rest, from, to);
}

// A rollout from its first record, the session's meta, and the records among the others written between from and to.
function rolloutOf(file: string, first: Record<string, unknown> | undefined, rest: readonly Record<string, unknown>[], from: number, to: number): Rollout | undefined {
  const meta = first?.type === "session_meta" && isRecord(first.payload) ? first.payload : undefined;
  if (!meta || typeof meta.id !== "string" || typeof meta.cwd !== "string") return undefined;
  const startMs = timeOf(meta.timestamp) ?? timeOf(first!.timestamp);
  if (startMs === undefined) return undefined;
  const source = meta.source;
  const side =
    meta.thread_source === "subagent" ||
    typeof meta.parent_thread_id === "string" ||
    (isRecord(source) && "subagent" in source) ||
    source === "exec" ||
    source === "mcp";
  const records = rest.filter((record) => {
    const at = timeOf(record.timestamp);
    return at !== undefined && at >= from && at <= to;
  });
  return { file, id: meta.id, cwd: meta.cwd, startMs, side, records };
}

// The run's own session: Codex's own thread in the run's folder, begun during the run or resumed in it (entries
// written during it), whose first user turn of the run is the prompt uuldana gave, when it gave one.
function fits(rollout: Rollout, turns: Turn[], folders: ReadonlySet<string | undefined>, prompt: string | undefined, from: number, to: number): boolean {
  if (rollout.side || !folders.has(rollout.cwd)) return false;
  const begun = rollout.startMs >= from && rollout.startMs <= to;
  if (!begun && rollout.records.length === 0) return false;
  if (prompt === undefined) return true;
  const first = turns.find((turn) => turn.role === "user");
  return first !== undefined && same(first.text, prompt);
}

function realPath(path: unknown): string | undefined {
  if (typeof path !== "string") return undefined;
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

// The turns of response items: the user's messages (not those Codex put in the user's role), its answers, and one
// line for each tool call; reasoning, tool output and the developer's instructions left out.
function turnsOf(records: readonly Record<string, unknown>[]): Turn[] {
  const turns: Turn[] = [];
  for (const record of records) {
    if (record.type !== "response_item" || !isRecord(record.payload)) continue;
    const item = record.payload;
    if (item.type === "message") {
      if (item.role === "user" && !contextual(item)) push(turns, "user", textOf(item.content, "input_text"));
      else if (item.role === "assistant") push(turns, "agent", textOf(item.content, "output_text"));
    } else {
      const tool = toolLine(item);
      if (tool) turns.push({ role: "tool", text: tool });
    }
  }
  return turns;
}

function push(turns: Turn[], role: Turn["role"], text: string): void {
  if (text.trim()) turns.push({ role, text });
}

// The text parts of a message, in order.
function textOf(content: unknown, kind: string): string {
  if (!Array.isArray(content)) return "";
  return content
    .filter((part): part is { text: string } => isRecord(part) && (part.type === kind || part.type === "text") && typeof part.text === "string")
    .map((part) => part.text)
    .join("\n");
}

// A message in the user's role that Codex wrote: one of its context blocks, or one whose parts it marks as coming
// from elsewhere than the user (its newer versions say each part's provenance).
function contextual(item: Record<string, unknown>): boolean {
  const parts = Array.isArray(item.content) ? item.content : [];
  for (const part of parts) {
    if (!isRecord(part) || typeof part.text !== "string") continue;
    const start = part.text.trimStart().slice(0, 40).toLowerCase();
    if (CONTEXT_PREFIXES.some((prefix) => start.startsWith(prefix))) return true;
  }
  const passthrough = item.internal_chat_message_metadata_passthrough;
  const marks = isRecord(passthrough) && Array.isArray(passthrough.content_item_metadata) ? passthrough.content_item_metadata : [];
  const origins = marks.map((mark) => (isRecord(mark) && isRecord(mark.provenance) ? mark.provenance.type : undefined)).filter((origin) => typeof origin === "string");
  return origins.length > 0 && !origins.includes("user");
}

// One line for a tool call: its name and what it acted on (the command it ran, the file it patched, what it looked
// up), at most TOOL_LINE characters; undefined for an item that is not a call.
function toolLine(item: Record<string, unknown>): string | undefined {
  let name = typeof item.name === "string" ? item.name : undefined;
  let target: string | undefined;
  const action = isRecord(item.action) ? item.action : {};
  if (item.type === "function_call") {
    if (typeof item.arguments !== "string") return undefined;
    target = argumentTarget(item.arguments);
  } else if (item.type === "custom_tool_call") {
    if (typeof item.input !== "string") return undefined;
    target = inputTarget(name, item.input);
  } else if (item.type === "local_shell_call") {
    name ??= "shell";
    target = commandLine(action.command);
  } else if (item.type === "web_search_call") {
    name ??= "web_search";
    target = typeof action.query === "string" ? action.query : undefined;
  } else return undefined;
  if (!name) return undefined;
  return clip(target ? `${name}: ${target}` : name);
}

// What a function call's JSON arguments name first: a command, a path, a query, a task.
function argumentTarget(text: string): string | undefined {
  if (text.length > 100_000) return undefined;
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isRecord(args)) return undefined;
  for (const key of ["cmd", "command", "path", "file_path", "url", "query", "pattern", "task_name"]) {
    const value = args[key];
    if (typeof value === "string" && value.trim()) return value;
    const line = commandLine(value);
    if (line) return line;
  }
  return undefined;
}

// A freeform tool's input: the files a patch touches; for a script (Codex's exec), the command it runs, else the
// tools it calls, else its first line.
function inputTarget(name: string | undefined, input: string): string | undefined {
  const head = input.slice(0, 20_000);
  const files = [...head.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.{1,300})$/gm)].map((match) => match[1]!.trim());
  if (name === "apply_patch" || files.length) return files.join(", ") || undefined;
  const command = /\b(?:cmd|command)\s*:\s*(?:"((?:[^"\\\n]|\\.){1,2000})"|'((?:[^'\\\n]|\\.){1,2000})'|`([^`]{1,2000})`)/.exec(head);
  if (command) return unquote(command[1], command[2], command[3]);
  const tools = [...new Set([...head.matchAll(/\btools\.([A-Za-z_$][\w$]{0,80})\s*\(/g)].map((match) => match[1]!))];
  if (tools.length) return tools.join(", ");
  return head.split("\n").find((line) => line.trim() && !line.trim().startsWith("//"));
}

function unquote(double: string | undefined, single: string | undefined, template: string | undefined): string {
  if (double !== undefined) {
    try {
      return JSON.parse(`"${double}"`) as string;
    } catch {
      return double;
    }
  }
  return single !== undefined ? single.replace(/\\(.)/g, "$1") : template!;
}

// A command given as its words: a shell's -c or -lc script as the script itself.
function commandLine(value: unknown): string | undefined {
  if (!Array.isArray(value) || !value.length || !value.every((word) => typeof word === "string")) return undefined;
  const words = value as string[];
  if (words.length === 3 && /(?:^|\/)(?:ba|z)?sh$/.test(words[0]!) && (words[1] === "-c" || words[1] === "-lc")) return words[2];
  return words.join(" ");
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > TOOL_LINE ? `${line.slice(0, TOOL_LINE - 1)}…` : line;
}

// --- the allowance, from the same rollout file ---
// Codex puts what the API's response headers say of the account's allowance (x-codex-primary-used-percent,
// -window-minutes and -reset-at, the same for secondary, x-codex-credits-*, x-codex-rate-limit-reached-type) in the
// token_count event it writes after each response: rate_limits {limit_id, limit_name, primary and secondary
// {used_percent, window_minutes, resets_at in Unix seconds}, credits, plan_type, rate_limit_reached_type}, its windows
// null when the response had no such headers (0.171 reads no -reset-after-seconds header: such a window has no
// reset). Versions before resets_at wrote resets_in_seconds, counted from the event. A turn the API refused at the
// usage limit ends in a task_complete whose error has codex_error_info "usage_limit_exceeded" (older versions wrote
// an error event).

// how much of the rollout's end is read for a reading (a token count follows every response, so the latest is near
// the end: first the last 64 KiB, then, with no token count in them, the last MiB), the longest line of it parsed (a
// token count is under 2 KB) and the longest first line (the session's meta, with Codex's instructions in it, is
// about 30 KB)
const QUOTA_TAIL_BYTES = [64 * 1024, 1024 * 1024];
const QUOTA_LINE = 64 * 1024;
const META_BYTES = 1024 * 1024;
// the date folders walked for the run's file, newest first: two months of daily use (a session resumed from an older
// folder gives no reading)
const QUOTA_FOLDERS = 62;
// the rollout files written last whose folders are watched besides the run's days: the session a resume goes on in
const RECENT_ROLLOUTS = 4;
// the lines that can bear on the allowance; no other line of the tail is parsed
const QUOTA_MARK = /"token_count"|usage_limit_exceeded|hit your usage limit/;
// any zone's local date is the UTC date of a moment at most this far before or after
const ZONE_MS = 14 * 3_600_000;
const WINDOWS = ["primary", "secondary"] as const;
// the id of Codex's general limit, whose windows are named plainly
const GENERAL_LIMIT = "codex";

// The folders whose changes bring Codex's next token count: the sessions folder, the date folders of the run's start
// and of now (in whatever zone Codex runs: a folder it has not made yet is waited for through the one above it),
// those of the rollout files written last (a resumed session goes on in the folder of the day it began), and the
// run's own file once there is one.
function quotaFiles(query: QuotaQuery): string[] {
  if (!isRecord(query) || !isRecord(query.env) || !(query.started instanceof Date)) return [];
  const home = accountFolder(query.env);
  const start = query.started.getTime();
  if (!home || !Number.isFinite(start)) return [];
  const sessions = join(home, "sessions");
  const days = new Set<string>();
  for (const at of [start - ZONE_MS, start, start + ZONE_MS, Date.now() - ZONE_MS, Date.now(), Date.now() + ZONE_MS]) {
    const date = new Date(at);
    if (!Number.isNaN(date.getTime())) days.add(join(sessions, ...date.toISOString().slice(0, 10).split("-")));
  }
  const recent = writtenSince(sessions, -Infinity, undefined, QUOTA_FOLDERS)
    .sort((a, b) => b.modifiedMs - a.modifiedMs)
    .slice(0, RECENT_ROLLOUTS);
  for (const file of recent) days.add(dirname(file.file));
  const own = ownRollouts(query, Infinity, undefined, readRolloutEnd, QUOTA_FOLDERS).map(({ rollout }) => rollout.file);
  return [sessions, ...[...days].sort(), ...own];
}

// The account's allowance as Codex last wrote it in the run's own rollout file (the one the transcript hook would
// take, read from its end): each window's use and reset, and whether Codex said the limit was reached.
function quota(query: QuotaQuery): NativeQuota | undefined {
  const fitting = ownRollouts(query, Infinity, undefined, readRolloutEnd, QUOTA_FOLDERS);
  return fitting.length === 1 ? readingOf(fitting[0]!.rollout.records) : undefined;
}

// A rollout file's meta (its first line) and, of its end, the records that can bear on the allowance, written
// between from and to.
function readRolloutEnd(file: string, from: number, to: number): Rollout | undefined {
  const head = readFirstLine(file, META_BYTES);
  if (head === undefined) return undefined;
  const [first] = jsonLines(head).filter(isRecord);
  let records: Record<string, unknown>[] = [];
  for (const bytes of QUOTA_TAIL_BYTES) {
    const tail = readTranscriptFile(file, bytes);
    if (tail === undefined) return undefined;
    const lines = tail.split("\n").filter((line) => line.length <= QUOTA_LINE && QUOTA_MARK.test(line));
    records = jsonLines(lines.join("\n")).filter(isRecord);
    if (records.some((record) => isRecord(record.payload) && record.payload.type === "token_count")) break;
  }
  return rolloutOf(file, first, records, from, to);
}

// The reading of a run's records: the windows of each limit's latest token count (Codex writes one limit's counts
// at a time, and when the API reports several, the last it parsed), and the allowance gone when the latest count of
// all names a limit reached or a full window (with no credits to go on with), or when Codex refused a turn at the
// usage limit after it.
function readingOf(records: readonly Record<string, unknown>[]): NativeQuota | undefined {
  const byLimit = new Map<string, NativeQuota["windows"]>();
  let latest: { limits: Record<string, unknown>; windows: NativeQuota["windows"] } | undefined;
  let refusal: { text?: string } | undefined;
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i]!;
    const event = record.type === "event_msg" && isRecord(record.payload) ? record.payload : undefined;
    if (!event) continue;
    if (event.type !== "token_count") {
      if (!latest) refusal ??= usageLimitRefusal(event);
      continue;
    }
    const limits = isRecord(event.rate_limits) ? event.rate_limits : undefined;
    const windows = limits ? windowsOf(limits, timeOf(record.timestamp)) : [];
    // a count of a response without the headers has its windows null, and says nothing
    if (!limits || (!windows.length && !reachedType(limits))) continue;
    const id = typeof limits.limit_id === "string" && limits.limit_id ? limits.limit_id : GENERAL_LIMIT;
    if (!byLimit.has(id)) byLimit.set(id, windows);
    latest ??= { limits, windows };
  }
  // Codex's general limit first, then the others by id
  const ids = [...byLimit.keys()].sort((a, b) => Number(b === GENERAL_LIMIT) - Number(a === GENERAL_LIMIT) || a.localeCompare(b));
  const windows = ids.flatMap((id) => byLimit.get(id)!);
  const reached = latest ? reachedType(latest.limits) : undefined;
  const credits = isRecord(latest?.limits.credits) ? latest.limits.credits : undefined;
  const full = (latest?.windows ?? []).filter((window) => window.usedPercent >= 100);
  const spentWindow = full.length > 0 && credits?.has_credits !== true && credits?.unlimited !== true;
  if (reached === undefined && !spentWindow && refusal === undefined) return windows.length ? { windows } : undefined;
  // the window that ran out, when the latest count shows one: the full one that resets last (the allowance is back
  // when every full one has reset), else, the limit named reached, the fullest; its reset is the allowance's when
  // every full window gives one. A refusal after counts that show no limit has no window of its own.
  const shown = reached !== undefined || spentWindow ? (latest?.windows ?? []) : [];
  const spent = full.length ? full : shown.toSorted((a, b) => b.usedPercent - a.usedPercent).slice(0, 1);
  const binding = spent.toSorted((a, b) => (a.resetsAt ?? "").localeCompare(b.resetsAt ?? "")).at(-1);
  const reset = binding && spent.every((window) => window.resetsAt !== undefined) ? binding.resetsAt : undefined;
  const kind = reached?.includes("credits") ? "credits" : binding ? kindOf(binding, latest!.limits) : undefined;
  return {
    windows,
    exhausted: { ...(kind ? { kind } : {}), ...(reset ? { reset_at: reset } : {}), ...(refusal?.text ? { text: refusal.text } : {}) },
  };
}

// The limit a token count says was reached ("rate_limit_reached", "workspace_member_credits_depleted", …), if any.
function reachedType(limits: Record<string, unknown>): string | undefined {
  const type = limits.rate_limit_reached_type;
  return typeof type === "string" && type ? type : undefined;
}

// The primary and secondary windows of a token count written at `at`, named so, or after the limit they belong to
// when it is not Codex's general one ("<limit name> primary").
function windowsOf(limits: Record<string, unknown>, at: number | undefined): NativeQuota["windows"] {
  const limit = limitLabel(limits);
  const windows: NativeQuota["windows"] = [];
  for (const which of WINDOWS) {
    const window = limits[which];
    if (!isRecord(window) || typeof window.used_percent !== "number" || !Number.isFinite(window.used_percent) || window.used_percent < 0) continue;
    const minutes = window.window_minutes;
    const resetsAt = resetOf(window, at);
    windows.push({
      name: limit ? `${limit} ${which}` : which,
      usedPercent: window.used_percent,
      ...(resetsAt ? { resetsAt } : {}),
      ...(typeof minutes === "number" && Number.isFinite(minutes) && minutes > 0 ? { windowMinutes: minutes } : {}),
    });
  }
  return windows;
}

// A window's reset as a date and time: resets_at in Unix seconds (or a date, should a version write one), else
// resets_in_seconds after the event.
function resetOf(window: Record<string, unknown>, at: number | undefined): string | undefined {
  const { resets_at: resetsAt, resets_in_seconds: resetsIn } = window;
  let ms: number | undefined;
  if (typeof resetsAt === "number") ms = resetsAt * 1000;
  else if (typeof resetsAt === "string") ms = Date.parse(resetsAt);
  else if (typeof resetsIn === "number" && resetsIn >= 0 && at !== undefined) ms = at + resetsIn * 1000;
  if (ms === undefined || !Number.isFinite(ms)) return undefined;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

// The name of a limit other than Codex's general one (a model's own): its name, else its id, at most 80 characters
// on one line.
function limitLabel(limits: Record<string, unknown>): string | undefined {
  for (const value of [limits.limit_name, limits.limit_id]) {
    const name = typeof value === "string" ? value.replace(/\s+/g, " ").trim().slice(0, 80) : "";
    if (name) return name.toLowerCase() === GENERAL_LIMIT ? undefined : name;
  }
  return undefined;
}

// The kind of limit a window is: a model's own limit, else by its length (Codex's primary is its 5-hour window, its
// secondary the weekly one, when their lengths are not given).
function kindOf(window: NativeQuota["windows"][number], limits: Record<string, unknown>): string {
  if (limitLabel(limits)) return "per-model";
  const minutes = window.windowMinutes ?? (window.name.endsWith("primary") ? 300 : 10_080);
  if (minutes <= 12 * 60) return "session";
  if (minutes <= 24 * 60) return "daily";
  if (minutes <= 8 * 24 * 60) return "weekly";
  return "monthly";
}

// A refused turn at the usage limit, with Codex's words: the error of a task_complete, or an error event, that names
// the usage limit; undefined for any other event.
function usageLimitRefusal(event: Record<string, unknown>): { text?: string } | undefined {
  const error = event.type === "task_complete" && isRecord(event.error) ? event.error : event.type === "error" ? event : undefined;
  if (!error) return undefined;
  const info = error.codex_error_info;
  const message = typeof error.message === "string" ? error.message.replace(/\s+/g, " ").trim().slice(0, 500) : "";
  const limited = info === "usage_limit_exceeded" || (isRecord(info) && "usage_limit_exceeded" in info) || /hit your usage limit/i.test(message);
  if (!limited) return undefined;
  return message ? { text: message } : {};
}

function same(a: string, b: string): boolean {
  const plain = (text: string): string => text.replace(/\r\n?/g, "\n").trim();
  return plain(a) === plain(b);
}

function timeOf(value: unknown): number | undefined {
  if (typeof value !== "string") return undefined;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export default defineProvider({ classify, busy, conversation, transcript, quotaFiles, quota });
