import { createHash } from "node:crypto";
import { lstatSync, readdirSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";

import { defineProvider, filesIn, jsonLines, readTranscriptFile, type Transcript, type TranscriptQuery, type Turn } from "../core/index.js";

// What Gemini CLI draws, read from its version 0.61.0: the loading line of a running turn, and its conversation (>
// the user's messages, ✦ its answers, ✕ its errors, boxes for tool calls and dialogs), the input box and footer at
// the bottom left out. It has no classify hook: the general reader stops on its quota dialog ("Usage limit reached
// for gemini-2.5-flash."), and the dialog's options alone ("Keep trying", "Stop") are also offered when the service
// is overloaded, which is not a stop. When a run ends, its conversation is read from the CLI's own chat record.

// Gemini's own lines are short: a longer line is the agent's text or a tool's output, and is not read
const LONGEST = 240;

// the rule above its input area
const RULE = /^─{20,}$/;
// a running turn: the loading line above the input area, a phrase with how to cancel and the time so far
// ("⠹ Thinking... (esc to cancel, 3s)", "(esc to cancel, 1m 9s)")
const LOADING = /\(esc to cancel, (?:\d{1,4}[hms] ?){1,3}\)/;

const USER = /^ ?> (\S.*)$/;
const AGENT = /^(?:✦|✕) (\S.*)$/;
const CONTINUED = /^ {2,}(\S.*)$/;
// the borders of a box it draws for a tool call or a dialog, and what stands between them
const BOX_EDGE = /^ ?[╭╰]─/;
const BOX_SIDE = /^ ?│/;
// the input box's placeholder, the loading line (a braille spinner), notices, and hints it aligns to the right
const PLACEHOLDER = /^Type your message\b/;
const SPINNER = /^ ?[\u2800-\u28ff] /;
const NOTICE = /^ ?(?:ℹ|⚠) /;
const RIGHT_ALIGNED = /^ {20,}\S/;

// A turn is running: the loading line stands just above the rule of the input area.
function busy(screen: readonly string[]): boolean {
  for (let i = screen.length - 1; i >= 0 && i >= screen.length - 30; i--) {
    if (!RULE.test(screen[i]!.trim())) continue;
    for (let j = i - 1, seen = 0; j >= 0 && seen < 3; j--) {
      const line = screen[j]!.trimEnd();
      if (!line) continue;
      seen++;
      if (LOADING.test(line.slice(0, LONGEST))) return true;
    }
    return false;
  }
  return false;
}

// Its turns: > begins the user's, ✦ the agent's and ✕ one of its errors; lines indented under them and what a box
// holds continue them. Everything from the rule of the input area down is not conversation.
function conversation(screenText: string): Turn[] | undefined {
  const lines = screenText.split("\n").map((line) => line.trimEnd());
  const end = lines.findLastIndex((line) => RULE.test(line.trim()));
  const turns: { role: Turn["role"]; lines: string[] }[] = [];
  let open = false;
  let blank = false;
  // a new paragraph: the user's message begins a turn; the agent's bullet goes on with its turn until the user speaks
  const begin = (role: Turn["role"], text: string): void => {
    const last = turns.at(-1);
    if (role === "agent" && last?.role === "agent") last.lines.push("", text);
    else turns.push({ role, lines: [text] });
    open = true;
    blank = false;
  };
  // a line under the open paragraph
  const more = (text: string): void => {
    turns.at(-1)!.lines.push(...(blank ? ["", text] : [text]));
    blank = false;
  };
  for (const line of end === -1 ? lines : lines.slice(0, end)) {
    if (!line) {
      blank = open;
      continue;
    }
    if (line.length > 2000 || RIGHT_ALIGNED.test(line) || SPINNER.test(line) || NOTICE.test(line) || BOX_EDGE.test(line)) continue;
    const user = USER.exec(line);
    const agent = user ? null : AGENT.exec(line);
    const boxed = user || agent ? undefined : insideBox(line);
    if (user && PLACEHOLDER.test(user[1]!)) open = false;
    else if (user) begin("user", user[1]!);
    else if (agent) begin("agent", agent[1]!);
    // a tool call or a dialog in a box: the agent's side of the conversation
    else if (boxed === "") blank = open;
    else if (boxed && open && turns.at(-1)!.role === "agent") more(boxed);
    else if (boxed) begin("agent", boxed);
    else if (CONTINUED.test(line) && open) more(line.slice(2));
    else open = false;
  }
  return turns.length ? turns.map(({ role, lines }) => ({ role, text: lines.join("\n") })) : undefined;
}

// What a line of a box holds between its side borders ("" for an empty one), or undefined for a line of no box.
function insideBox(line: string): string | undefined {
  if (!BOX_SIDE.test(line) || !line.endsWith("│")) return undefined;
  return line.slice(line.indexOf("│") + 1, -1).trim();
}

// --- its own chat records ---
// Gemini CLI 0.61 records each session as JSON Lines in
// <home>/.gemini/tmp/<project>/chats/session-<minute>-<id8>.jsonl: a first line with sessionId and projectHash (the
// SHA-256 of the folder it ran in), then one line per message (user, gemini, info, error, warning), written again
// under the same id when it changes, {"$set": …} for metadata and {"$rewindTo": id} when the user rewinds. <project>
// is the folder's name made a slug, kept in <home>/.gemini/projects.json and in tmp/<project>/.project_root; older
// versions named it by the hash and wrote one JSON object per file. A resumed session goes on in its old file, so
// only the messages written during the run are its part.

// how far before the run's start and after its end a message's time may be and still be the run's: it cannot write
// before it is started, and a run resumed right after the last one ended must not take that one's last messages
const EARLY_MS = 250;
const LATE_MS = 5000;
// the most session files written during a run in one folder that are read to tell the run's from the others
const MOST_CANDIDATES = 8;
// the most project folders looked through for the one whose .project_root names the folder the run was in
const MOST_PROJECTS = 2000;
// a tool call's line: at most this many characters
const TOOL_LINE = 200;
const SESSION_FILE = /^session-.+\.jsonl?$/;
const PROJECT_NAME = /^[a-z0-9][a-z0-9._-]{0,254}$/i;
// what a user message holds that no one typed: the context the CLI opens a session with, slash commands, the help
// key
const NOT_TYPED = /^(?:\/|\?|<session_context>|<hook_context>)/;
// the argument that names what a tool acted on, first found first
const TARGETS = ["command", "file_path", "dir_path", "path", "pattern", "query", "url", "prompt"];

interface Chat {
  sessionId: string | undefined;
  projectHash: string | undefined;
  messages: Map<string, Record<string, unknown>>;
}

// The run's conversation from Gemini's chat record: the file named by the session id uuldana gave, or else the one
// file of the run's folder that holds messages of the run (and begins with its prompt, when it had one); in either,
// only the messages written while the run lasted.
function transcript(query: TranscriptQuery): Transcript | undefined {
  if (!isQuery(query)) return undefined;
  const home = query.env.GEMINI_CLI_HOME || query.env.HOME;
  if (!home) return undefined;
  const roots = projectRoots(query.cwd);
  const hashes = new Set(roots.map(sha256));
  const from = query.started.getTime() - EARLY_MS;
  const to = query.ended.getTime() + LATE_MS;
  const id = query.sessionId;
  const candidates = chatFolders(home, roots).flatMap((folder) =>
    filesIn(folder, SESSION_FILE).filter((found) => (id ? found.name.endsWith(`-${id.slice(0, 8)}.jsonl`) : found.modifiedMs >= from)),
  );
  if (candidates.length > MOST_CANDIDATES) return undefined;
  const fits: Transcript[] = [];
  for (const { file, name } of candidates) {
    const chat = readChat(file, name.endsWith(".json"));
    if (!chat || (chat.projectHash !== undefined && !hashes.has(chat.projectHash))) continue;
    if (id && chat.sessionId !== id) continue;
    const turns = turnsOf([...chat.messages.values()], from, to);
    if (!turns.length) continue;
    if (!id && query.prompt !== undefined && turns.find((turn) => turn.role === "user")?.text.trim() !== query.prompt.trim()) continue;
    fits.push({ file, turns });
  }
  return fits.length === 1 ? fits[0] : undefined;
}

// A query of the shape the contract gives, with times that are times.
function isQuery(query: TranscriptQuery): boolean {
  const { cwd, env, started, ended, sessionId, prompt } = (asObject(query) ?? {}) as Partial<TranscriptQuery>;
  return (
    typeof cwd === "string" &&
    asObject(env) !== undefined &&
    started instanceof Date &&
    ended instanceof Date &&
    !Number.isNaN(started.getTime() + ended.getTime()) &&
    (sessionId === undefined || (typeof sessionId === "string" && sessionId.length >= 8)) &&
    (prompt === undefined || typeof prompt === "string")
  );
}

// The folder the CLI records as the project: the run's folder as given and as the system resolves it (the CLI reads
// its own working directory, which has no links in it).
function projectRoots(cwd: string): string[] {
  const roots = [resolve(cwd)];
  try {
    const real = realpathSync(cwd);
    if (real !== roots[0]) roots.push(real);
  } catch {
    // gone: the path as given
  }
  return roots;
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

// The chats folders of the run's project under an account's home: the one projects.json names, the older one named by
// the hash, or (without a registry entry) the one whose .project_root names the folder. Under macOS's seatbelt
// sandbox the CLI keeps them under .cache/.gemini instead.
function chatFolders(home: string, roots: string[]): string[] {
  const folders: string[] = [];
  for (const base of [join(home, ".gemini"), join(home, ".cache", ".gemini")]) {
    const tmp = join(base, "tmp");
    const names = new Set(registered(join(base, "projects.json"), roots));
    if (!names.size) for (const name of owning(tmp, roots)) names.add(name);
    for (const root of roots) names.add(sha256(root));
    for (const name of names) {
      const chats = join(tmp, name, "chats");
      if (isFolder(join(tmp, name)) && isFolder(chats)) folders.push(chats);
    }
  }
  return folders;
}

// The project names projects.json gives the folder.
function registered(file: string, roots: string[]): string[] {
  const projects = asObject(parse(readTranscriptFile(file, 4 * 1024 * 1024)))?.projects;
  const table = asObject(projects);
  if (!table) return [];
  const key = (root: string): string => (process.platform === "win32" ? root.toLowerCase() : root);
  return roots.map((root) => table[key(root)]).filter((name): name is string => typeof name === "string" && PROJECT_NAME.test(name));
}

// The project folders whose .project_root names the folder, as the CLI finds them when its registry is lost.
function owning(tmp: string, roots: string[]): string[] {
  let names: string[];
  try {
    names = readdirSync(tmp).slice(0, MOST_PROJECTS);
  } catch {
    return [];
  }
  return names.filter((name) => PROJECT_NAME.test(name) && roots.includes(readTranscriptFile(join(tmp, name, ".project_root"), 4096)?.trim() ?? ""));
}

// A real folder: not a link to one elsewhere.
function isFolder(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

// A session file's id, project and messages in their order, each as last written; undefined when it holds none of
// that (not Gemini's, or unreadable).
function readChat(file: string, whole: boolean): Chat | undefined {
  const text = readTranscriptFile(file);
  if (text === undefined) return undefined;
  const chat: Chat = { sessionId: undefined, projectHash: undefined, messages: new Map() };
  const records = whole ? legacyRecords(text) : jsonLines(text);
  let known = false;
  for (const value of records) {
    const record = asObject(value);
    if (!record) continue;
    const set = asObject(record.$set);
    if (typeof record.$rewindTo === "string") {
      rewind(chat.messages, record.$rewindTo);
    } else if (typeof record.id === "string") {
      chat.messages.set(record.id, record);
    } else if (set) {
      if (typeof set.sessionId === "string") chat.sessionId ??= set.sessionId;
      if (typeof set.projectHash === "string") chat.projectHash ??= set.projectHash;
    } else if (typeof record.sessionId === "string" && typeof record.projectHash === "string") {
      chat.sessionId ??= record.sessionId;
      chat.projectHash ??= record.projectHash;
      known = true;
    }
  }
  return known || chat.messages.size ? chat : undefined;
}

// An older version's file: one object with the metadata and all messages.
function legacyRecords(text: string): unknown[] {
  const whole = asObject(parse(text));
  if (!whole || !Array.isArray(whole.messages)) return [];
  const { messages, ...metadata } = whole;
  return [metadata, ...messages];
}

// The user rewound to a message: it and all after it are no longer the conversation (all of it, if it is not there).
function rewind(messages: Map<string, unknown>, id: string): void {
  if (!messages.has(id)) {
    messages.clear();
    return;
  }
  let after = false;
  for (const key of [...messages.keys()]) {
    after ||= key === id;
    if (after) messages.delete(key);
  }
}

// The turns of the messages written from one time to another: what the user typed, the agent's text and one line per
// tool call. Hidden reasoning (thoughts), tool output, the CLI's notices and errors (the quota
// error among them) are left out; so are a rewrite of the whole list ($set.messages), which is the CLI's memory for
// the model, not what was said.
function turnsOf(messages: Record<string, unknown>[], from: number, to: number): Turn[] {
  const turns: Turn[] = [];
  for (const message of messages) {
    const time = typeof message.timestamp === "string" ? Date.parse(message.timestamp) : NaN;
    if (!(time >= from && time <= to)) continue;
    if (message.type === "user") {
      const text = textOf(message.displayContent) || textOf(message.content);
      if (text.trim() && !NOT_TYPED.test(text.trim())) turns.push({ role: "user", text });
    } else if (message.type === "gemini") {
      const text = textOf(message.content);
      if (text.trim()) turns.push({ role: "agent", text });
      const calls = Array.isArray(message.toolCalls) ? message.toolCalls : [];
      for (const call of calls) {
        const line = toolLine(asObject(call));
        if (line) turns.push({ role: "tool", text: line });
      }
    }
  }
  return turns;
}

// The text of a message's content (a string, a part or a list of them), hidden reasoning parts left out.
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  const parts = Array.isArray(content) ? content : [content];
  let text = "";
  for (const part of parts) {
    if (typeof part === "string") text += part;
    const object = asObject(part);
    if (object && typeof object.text === "string" && object.thought !== true) text += object.text;
  }
  return text;
}

// One tool call on one line: the tool as the CLI names it and what it acted on ("ReadFile: src/app.ts",
// "Shell: npm test"), with " (error)" or " (cancelled)" when it did not run through.
function toolLine(call: Record<string, unknown> | undefined): string | undefined {
  if (!call) return undefined;
  const name = [call.displayName, call.name].find((value): value is string => typeof value === "string" && value.trim() !== "" && value.length <= 80);
  if (!name) return undefined;
  const args = asObject(call.args) ?? {};
  const target =
    TARGETS.map((key) => args[key]).find((value): value is string => typeof value === "string" && value.trim() !== "") ??
    (typeof call.description === "string" && call.description.length <= 120 && !call.description.includes("\n") ? call.description : "");
  const status = call.status === "error" || call.status === "cancelled" ? ` (${call.status})` : "";
  const line = `${name.trim()}${target.trim() ? `: ${target.trim().split("\n")[0]!.trim()}` : ""}`;
  return line.length + status.length > TOOL_LINE ? `${line.slice(0, TOOL_LINE - status.length - 1)}…${status}` : line + status;
}

function parse(text: string | undefined): unknown {
  if (!text?.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

export default defineProvider({ busy, conversation, transcript });
