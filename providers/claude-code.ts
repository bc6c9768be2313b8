import { lstatSync, readdirSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";

import { defineProvider, filesIn, jsonLines, readTranscriptFile, statusRelayCommand, type NativeQuota, type ProviderVerdict, type QuotaQuery, type Transcript, type TranscriptQuery, type Turn } from "../core/index.js";

// What Claude Code draws, read from its versions 2.1.197 and 2.1.332: its limit menu and its native wait at a limit,
// the spinner and footer of a running turn, and its conversation (❯ the user's prompts, ● or ⏺ its answers and tool
// calls, ⎿ what a tool or the CLI answered under them); and the session file it writes, the run's own transcript.

// Claude Code's own lines are short: a longer line is the agent's text or a tool's output, and is not read
const LONGEST = 240;

// its native wait: it carries on by itself when the limit resets, so for uuldana the allowance is gone now
// ("Continuing automatically at 6:27pm · Esc to cancel"; some versions "… · esc or type to cancel")
const NATIVE_WAIT = /^(?:⚠ )?(?:usage limit reached · )?continuing automatically (?:at [^·]{1,40}|when it resets|shortly) · esc(?: or type)? to cancel$/i;
// the modal menu it opens at a limit: an option only that menu offers, with its title or its hint
const MENU_OPTION = /^(?:❯ )?\d\. (?:Stop and wait for limit to reset|Wait here, then continue automatically\b.{0,60})$/;
const MENU_FRAME = /^(?:What do you want to do\?|Enter to confirm · Esc to cancel)$/;

// the rules above and below the input box, and the rule that opens a menu in place of the box
const RULE = /^─{20,}$/;
const MENU_RULE = /^▔{20,}/;
// a running turn: the footer under the input box says how to interrupt it, or the spinner above the box (a glyph, a
// word and an ellipsis, perhaps a timer: "✻ Determining…", "✶ Crunching… (12s · esc to interrupt)")
const INTERRUPT = /\besc to interrupt\b/i;
const SPINNER = /^[✻✽✶✳✢·*] \S.{0,60}…(?: \(.{1,80}\))?$/u;

const USER = /^(?:❯|>) (\S.*)$/;
const AGENT = /^(?:●|⏺) (\S.*)$/;
const RESULT = /^ {1,6}⎿ {1,4}(\S.*)$/;
const CONTINUED = /^ {2,}(\S.*)$/;
// the CLI's own notices: tips under a line, limit notices drawn with the agent's bullet, the footer and its hints,
// and notifications it aligns to the right
const TIP = /^Tip: /;
const NOTICE = /^(?:Usage limit (?:reached|reset|available|has reset)|Automatic continue)\b/;
const FOOTER = /^\s*(?:⏸|⏵⏵?) |\? for shortcuts|\besc to interrupt\b|← for agents|\/effort$/;
const RIGHT_ALIGNED = /^ {20,}\S/;
// it pads some marks with no-break spaces ("⎿ \u00a0You've hit your …")
const NBSP = /\u00a0/g;
const EXPAND_HINT = / \(ctrl\+o to expand\)$/;

// Its limit menu and its native wait, which the general reader does not read as a stop.
function classify(text: string): ProviderVerdict | undefined {
  let option: string | undefined;
  let frame = false;
  for (const raw of text.split("\n", 400)) {
    if (raw.length > 2 * LONGEST) continue;
    const line = raw.replace(NBSP, " ").trim();
    if (line.length > LONGEST) continue;
    if (NATIVE_WAIT.test(line)) return { stop: true, reason: `Claude Code waits for its limit to reset by itself ("${line}")` };
    if (MENU_OPTION.test(line)) option ??= line.replace(/^❯ /, "");
    else if (MENU_FRAME.test(line)) frame = true;
  }
  return option && frame ? { stop: true, reason: `Claude Code's limit menu is open ("${option}")` } : undefined;
}

// A turn is running: "esc to interrupt" in the footer under the input box, or the spinner just above the box.
function busy(screen: readonly string[]): boolean {
  let bottom = -1;
  let top = -1;
  for (let i = screen.length - 1; i >= 0 && i >= screen.length - 60; i--) {
    if (!RULE.test(screen[i]!.trim())) continue;
    if (bottom === -1) bottom = i;
    else {
      top = i;
      break;
    }
  }
  if (top === -1 || bottom - top > 12) return false;
  for (let i = bottom + 1; i < screen.length; i++) if (INTERRUPT.test(screen[i]!.slice(0, LONGEST))) return true;
  for (let i = top - 1, seen = 0; i >= 0 && seen < 4; i--) {
    const line = screen[i]!.trimEnd();
    if (!line) continue;
    seen++;
    if (line.length <= LONGEST && SPINNER.test(line)) return true;
  }
  return false;
}

// Its turns: ❯ (or >) begins the user's, ● (or ⏺) the agent's, ⎿ what a tool gave; lines indented under them
// continue them. Spinners, the input box, menus, footers and the CLI's notices are not turns.
function conversation(screenText: string): Turn[] | undefined {
  const turns = new TurnList();
  let inBox = false;
  let inMenu = false;
  for (const raw of screenText.split("\n")) {
    const line = raw.replace(NBSP, " ").trimEnd();
    if (!line) {
      turns.gap();
      continue;
    }
    if (RULE.test(line.trim()) || MENU_RULE.test(line.trim())) {
      // the input box lies between two rules; a menu opens under one and lasts until the next turn
      if (MENU_RULE.test(line.trim())) inMenu = true;
      else inBox = !inBox;
      turns.close();
      continue;
    }
    const user = USER.exec(line);
    const agent = user ? null : AGENT.exec(line);
    if (user || agent) inMenu = false;
    if (inBox || inMenu || line.length > 2000) continue;
    if (!user && !agent && (RIGHT_ALIGNED.test(line) || FOOTER.test(line.slice(0, LONGEST)))) continue;
    const result = user || agent ? null : RESULT.exec(line);
    const continued = user || agent || result ? null : CONTINUED.exec(line);
    if (user) turns.begin("user", user[1]!);
    else if (agent && NOTICE.test(agent[1]!)) turns.close();
    else if (agent) turns.begin("agent", agent[1]!.replace(EXPAND_HINT, ""));
    else if (result && !TIP.test(result[1]!)) turns.add("agent", result[1]!, line.length - result[1]!.length);
    else if (continued) turns.continue(line.slice(Math.min(turns.indent, line.length - continued[1]!.length)).replace(EXPAND_HINT, ""));
    // a line at the margin that begins no turn (a spinner, "✻ Worked for 9s", the banner) ends the one before
    else if (!result) turns.close();
  }
  return turns.list();
}

// Turns as they are read line by line: the one open takes the lines indented under it; an agent's turn goes on
// across its bullets, tool summaries and spinners until the user speaks.
class TurnList {
  private readonly turns: { role: Turn["role"]; lines: string[] }[] = [];
  private open = false;
  private blank = false;
  // where the open paragraph's text begins: the lines under it are indented as far
  indent = 2;

  // a new paragraph: the user's prompt begins a turn, the agent's bullet goes on with its turn
  begin(role: Turn["role"], text: string): void {
    const last = this.turns.at(-1);
    if (role === "agent" && last?.role === "agent") last.lines.push("", text);
    else this.turns.push({ role, lines: [text] });
    this.open = true;
    this.blank = false;
    this.indent = 2;
  }

  // a line under a paragraph (a tool's result): it goes on with the agent's turn, or begins one
  add(role: Turn["role"], text: string, indent: number): void {
    const last = this.turns.at(-1);
    if (last?.role !== role) this.begin(role, text);
    else last.lines.push(...(this.blank ? ["", text] : [text]));
    this.open = true;
    this.blank = false;
    this.indent = indent;
  }

  // an indented line: part of the open turn, if one is open
  continue(text: string): void {
    const last = this.turns.at(-1);
    if (!this.open || !last) return;
    last.lines.push(...(this.blank ? ["", text] : [text]));
    this.blank = false;
  }

  gap(): void {
    if (this.open) this.blank = true;
  }

  close(): void {
    this.open = false;
    this.blank = false;
  }

  list(): Turn[] | undefined {
    return this.turns.length ? this.turns.map(({ role, lines }) => ({ role, text: lines.join("\n") })) : undefined;
  }
}

// --- its own transcript ---

// Read from its version 2.1.332, which writes each session as JSON Lines to <config dir>/projects/<folder>/<session
// id>.jsonl: the config dir is CLAUDE_CONFIG_DIR, else ~/.claude; the folder is the working directory with its links
// resolved and each UTF-16 unit that is not an ASCII letter or digit written "-", cut at 200 characters and then
// followed by "-" and the path's 32-bit string hash in base 36. --continue appends to the file of the session it
// continues. "user" and "assistant" entries hold the conversation, one assistant entry per block of an answer (text,
// thinking, tool_use); the tools' results come back as user entries; sub-agents write files of their own.

const FOLDER_LONGEST = 200;
// how far before the run's start and after its end an entry's time may lie: the CLI stamps each entry as it makes it,
// and cannot before it is started, while a run that continues a session right after the last one ended must not take
// that one's last entries (a second apart, or less)
const EARLY_MS = 250;
const LATE_MS = 2000;
const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SESSION_FILE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.jsonl$/i;
// the session files of one folder looked into when no id says which: the newest of those written since the run began
const MOST_CANDIDATES = 8;
// the folders of projects/ looked through for a session file that is not in the folder its working directory names
const MOST_FOLDERS = 10_000;
const TOOL_LONGEST = 200;
// what the CLI writes in a user entry that the user did not say: its notes on local commands, a shell command's
// output, a background task's notice, its system reminders, and its note that a request was interrupted
const CLI_NOTE = /^\s*<(?:command-name|command-message|command-args|local-command-stdout|local-command-stderr|local-command-caveat|bash-stdout|bash-stderr|bash-exit-code|task-notification|system-reminder)>/;
const INTERRUPTED = /^\[Request interrupted by user[^\]\n]{0,40}\]$/;
// a shell command the user ran with "!"
const SHELL_INPUT = /^<bash-input>([\s\S]*)<\/bash-input>$/;
// the field of a tool's input that names its target, in order of preference
const TARGET_KEYS = ["command", "file_path", "notebook_path", "pattern", "path", "url", "query", "description", "skill", "prompt"];
const PATH_KEYS = new Set(["file_path", "notebook_path", "path"]);

type Entry = Record<string, unknown>;

interface Window {
  from: number;
  to: number;
}

// A run's session file, the entries it wrote there during the run, and the working directory they record.
interface Found {
  file: string;
  run: Entry[];
  cwd: string;
}

// The run's turns from Claude Code's own session file: the file of the session id uuldana gave it, or else the one
// file of the working directory's folder written during the run (and opening with the run's prompt, if it had one).
function transcript(query: TranscriptQuery): Transcript | undefined {
  if (!(query.started instanceof Date) || !(query.ended instanceof Date)) return undefined;
  const window = { from: query.started.getTime() - EARLY_MS, to: query.ended.getTime() + LATE_MS };
  const found = runFile(query, window, { prompt: typeof query.prompt === "string" ? query.prompt : undefined, elsewhere: true });
  return found && { file: found.file, turns: turnsOf(found.run, found.cwd) };
}

// The run's own session file and the entries it wrote there within the window: the file named by the session id
// (looked for in the other folders of projects/ too, when elsewhere), or else the one file of the working
// directory's folder that fits (and opens with the prompt, when there is one); undefined when none is found, or two
// fit. With maxBytes, only that much of the end of a file is read.
function runFile(query: { cwd: unknown; env: Readonly<Record<string, string>>; sessionId: unknown }, window: Window, how: { prompt?: string | undefined; elsewhere?: boolean; maxBytes?: number }): Found | undefined {
  if (typeof query.cwd !== "string" || !query.cwd || !Number.isFinite(window.from) || !Number.isFinite(window.to)) return undefined;
  const projects = projectsFolder(query.env);
  if (!projects) return undefined;
  const cwd = resolved(query.cwd);
  const folder = join(projects, folderName(cwd));
  if (query.sessionId !== undefined) return bySessionId(how.elsewhere ? projects : undefined, folder, cwd, window, query.sessionId, how.maxBytes);
  return byTime(folder, cwd, window, how.prompt, how.maxBytes);
}

// The account's projects folder: CLAUDE_CONFIG_DIR's, else the one under HOME; none when neither is a full path.
function projectsFolder(env: Readonly<Record<string, string>>): string | undefined {
  const config = configFolder(env);
  return config && join(config, "projects");
}

// The account's config folder: CLAUDE_CONFIG_DIR, else ~/.claude under HOME; none when neither is a full path.
function configFolder(env: Readonly<Record<string, string>>): string | undefined {
  const own: unknown = env?.CLAUDE_CONFIG_DIR;
  if (typeof own === "string" && own !== "") return isAbsolute(own) ? own : undefined;
  const home: unknown = env?.HOME;
  return typeof home === "string" && isAbsolute(home) ? join(home, ".claude") : undefined;
}

function resolved(cwd: string): string {
  try {
    return realpathSync(cwd);
  } catch {
    return cwd;
  }
}

function folderName(cwd: string): string {
  const name = cwd.replace(/[^a-zA-Z0-9]/g, "-");
  if (name.length <= FOLDER_LONGEST) return name;
  let hash = 0;
  for (let i = 0; i < cwd.length; i++) hash = (Math.imul(hash, 31) + cwd.charCodeAt(i)) | 0;
  return `${name.slice(0, FOLDER_LONGEST)}-${Math.abs(hash).toString(36)}`;
}

function bySessionId(projects: string | undefined, folder: string, cwd: string, window: Window, id: unknown, maxBytes: number | undefined): Found | undefined {
  if (typeof id !== "string" || !SESSION_ID.test(id)) return undefined;
  const name = `${id}.jsonl`;
  const file = isRegularFile(join(folder, name)) ? join(folder, name) : projects && elsewhere(projects, name);
  if (!file) return undefined;
  const entries = readEntries(file, id, maxBytes);
  if (!entries?.length) return undefined;
  const run = entries.filter((entry) => within(entry, window));
  const first = run.find(isConversation);
  if (first && first.cwd !== cwd) return undefined;
  return { file, run, cwd };
}

// A session file of that name in another folder of the account's projects (its folder named another way).
function elsewhere(projects: string, name: string): string | undefined {
  let folders: string[];
  try {
    folders = readdirSync(projects).slice(0, MOST_FOLDERS);
  } catch {
    return undefined;
  }
  return folders.filter((folder) => isFolder(join(projects, folder))).map((folder) => join(projects, folder, name)).find(isRegularFile);
}

function byTime(folder: string, cwd: string, window: Window, prompt: string | undefined, maxBytes: number | undefined): Found | undefined {
  const fits: Found[] = [];
  for (const found of filesIn(folder, SESSION_FILE).filter((file) => file.modifiedMs >= window.from).slice(0, MOST_CANDIDATES)) {
    const run = readEntries(found.file, found.name.slice(0, -".jsonl".length), maxBytes)?.filter((entry) => within(entry, window));
    const first = run?.find(isConversation);
    if (!run || !first || first.cwd !== cwd) continue;
    if (prompt !== undefined && turnsOf(run, cwd).find((turn) => turn.role === "user")?.text.trim() !== prompt.replace(/\r\n?/g, "\n").trim()) continue;
    fits.push({ file: found.file, run, cwd });
  }
  // two sessions that both fit are never told apart by a guess
  return fits.length === 1 ? fits[0] : undefined;
}

function isFolder(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

function isRegularFile(file: string): boolean {
  try {
    return lstatSync(file).isFile();
  } catch {
    return false;
  }
}

// The file's entries of that session, in order; undefined when it cannot be read.
function readEntries(file: string, id: string, maxBytes?: number): Entry[] | undefined {
  const text = readTranscriptFile(file, maxBytes);
  if (text === undefined) return undefined;
  return jsonLines(text).filter((value): value is Entry => isRecord(value) && typeof value.type === "string" && value.sessionId === id);
}

function within(entry: Entry, window: Window): boolean {
  const at = typeof entry.timestamp === "string" ? Date.parse(entry.timestamp) : Number.NaN;
  return at >= window.from && at <= window.to;
}

function isConversation(entry: Entry): boolean {
  return (entry.type === "user" || entry.type === "assistant") && entry.isSidechain !== true;
}

// The turns of the run's entries: the user's words, the agent's text (its blocks of one answer joined) and one line
// per tool call; reasoning, tool results, the CLI's notes and its limit and API error messages left out.
function turnsOf(entries: readonly Entry[], cwd: string): Turn[] {
  const turns: Turn[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    if (!isConversation(entry) || entry.isMeta === true || entry.isCompactSummary === true || entry.isVisibleInTranscriptOnly === true) continue;
    if (typeof entry.uuid === "string") {
      if (seen.has(entry.uuid)) continue;
      seen.add(entry.uuid);
    }
    const message = entry.message;
    if (!isRecord(message)) continue;
    if (entry.type === "user") {
      const text = userText(entry, message.content);
      if (text !== undefined) turns.push({ role: "user", text });
      continue;
    }
    if (entry.isApiErrorMessage === true || entry.error !== undefined || message.model === "<synthetic>") continue;
    for (const part of partsOf(message.content)) {
      const last = turns.at(-1);
      if (part.type === "text" && typeof part.text === "string" && part.text.trim()) {
        if (last?.role === "agent") last.text += `\n\n${part.text}`;
        else turns.push({ role: "agent", text: part.text });
      } else if (part.type === "tool_use" || part.type === "server_tool_use") {
        const line = toolLine(part, cwd);
        if (line) turns.push({ role: "tool", text: line });
      }
    }
  }
  return turns;
}

// What the user said in a user entry; undefined for a tool's result or one of the CLI's own notes.
function userText(entry: Entry, content: unknown): string | undefined {
  if (entry.rowSource === "harness" || (isRecord(entry.origin) && entry.origin.kind !== "human")) return undefined;
  let text: string;
  if (typeof content === "string") text = content;
  else {
    const parts = partsOf(content);
    if (parts.some((part) => part.type === "tool_result")) return undefined;
    text = parts
      .map((part) => (part.type === "text" && typeof part.text === "string" && !CLI_NOTE.test(part.text) ? part.text : ""))
      .filter((part) => part.trim())
      .join("\n\n");
  }
  const shell = SHELL_INPUT.exec(text.trim());
  if (shell) return `!${shell[1]!}`;
  if (!text.trim() || CLI_NOTE.test(text) || INTERRUPTED.test(text.trim())) return undefined;
  return text;
}

function partsOf(content: unknown): Record<string, unknown>[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.filter(isRecord) : [];
}

// One tool call on one line: its name and its target (the command, the file, the pattern…), a file in the working
// directory named from there.
function toolLine(part: Record<string, unknown>, cwd: string): string | undefined {
  const name = typeof part.name === "string" ? flatten(part.name) : "";
  if (!name) return undefined;
  const input = isRecord(part.input) ? part.input : {};
  const key = TARGET_KEYS.find((field) => typeof input[field] === "string" && flatten(input[field] as string) !== "");
  let target = key ? flatten(input[key] as string) : "";
  if (key && PATH_KEYS.has(key) && target.startsWith(cwd + sep)) target = relative(cwd, target);
  return cut(target ? `${name}: ${target}` : name, TOOL_LONGEST);
}

function flatten(text: string): string {
  return text.slice(0, 4 * TOOL_LONGEST).replace(/\s+/g, " ").trim();
}

function cut(text: string, longest: number): string {
  if (text.length <= longest) return text;
  const end = /[\ud800-\udbff]/.test(text[longest - 2]!) ? longest - 2 : longest - 1;
  return `${text.slice(0, end)}…`;
}

// --- its own quota ---

// Read from its version 2.1.332. Its status line: the command a statusLine setting names ({"type": "command",
// "command": …, and perhaps padding, refreshInterval, hideVimModeIndicator}) runs through the shell after each answer
// with the session's status as JSON on stdin, whose rate_limits hold each window of a subscription's allowance
// ({"five_hour": {"used_percentage": 93, "resets_at": <Unix seconds>}, "seven_day": …}; behind a gateway with a
// spend limit, "spend_limit" too). Settings are merged from the user's file (settings.json in the config dir), the
// project's (.claude/settings.json) and the local one (.claude/settings.local.json), each later one over the one
// before, and a file passed with --settings over those three. A refusal at a limit it records in the session file
// as an assistant entry with isApiErrorMessage, error "rate_limit" and apiErrorStatus 429, the banner as its text
// and, in quotaLimits (or apiErrorParams.rate_limit_info), the limit's status, type and resetsAt in Unix seconds; a
// 429 the servers send when they are busy gets the same error, with apiErrorIsTransient and no quotaLimits. After a
// refusal the status JSON has no rate_limits: the session file is what says the allowance is gone.

// a settings file larger than this is not a settings file
const SETTINGS_MOST_BYTES = 1024 * 1024;
// what is read of the session file when a reading is taken: its end, where the run's newest entries are
const QUOTA_TAIL_BYTES = 256 * 1024;
const WINDOWS: Record<string, { minutes?: number; kind: string }> = {
  five_hour: { minutes: 300, kind: "session" },
  seven_day: { minutes: 7 * 24 * 60, kind: "weekly" },
  spend_limit: { kind: "credits" },
};
// the limits its refusals name (rateLimitType), as the kinds of limit uuldana knows
const LIMIT_KINDS: Record<string, string> = {
  five_hour: "session",
  seven_day: "weekly",
  seven_day_opus: "per-model",
  seven_day_sonnet: "per-model",
  overage: "credits",
};
const SPEND_PERIODS = new Set(["daily", "weekly", "monthly"]);
// its refusal when the servers are busy ("API Error: Server is temporarily limiting requests (not your usage limit)")
const NOT_USAGE = /\bnot your usage limit\b/i;

// The run's settings: the user's own status line as Claude Code would have found it, with uuldana's relay run in its
// place, which copies each status to the run's feed and then runs the user's command with the same input.
function launchSettings(query: QuotaQuery): Record<string, unknown> | undefined {
  if (typeof query.feed !== "string" || !isAbsolute(query.feed) || typeof query.cwd !== "string" || !query.cwd) return undefined;
  const own = ownStatusLine(query.env);
  const command = own?.type === "command" && typeof own.command === "string" && own.command.trim() ? own.command : undefined;
  return { statusLine: { ...(own ?? {}), type: "command", command: statusRelayCommand(query.feed, command) } };
}

// The statusLine of the user's own settings (settings.json in the account's config folder); undefined with none.
// A project's settings (.claude/settings.json, .claude/settings.local.json) are never read for it: a command taken
// from a cloned repository would become one uuldana passes with --settings. (Version 2.1.332 runs nothing of
// --settings until the folder is trusted; test:real checks it.) Under uuldana a project's status line gives way to
// the user's.
function ownStatusLine(env: Readonly<Record<string, string>>): Record<string, unknown> | undefined {
  const config = configFolder(env);
  const statusLine = config ? settingsIn(join(config, "settings.json"))?.statusLine : undefined;
  return isRecord(statusLine) ? statusLine : undefined;
}

// A settings file's JSON object; undefined when it is missing, not a regular file, too large or not JSON.
function settingsIn(file: string): Record<string, unknown> | undefined {
  try {
    if (statSync(file).size > SETTINGS_MOST_BYTES) return undefined;
  } catch {
    return undefined;
  }
  const text = readTranscriptFile(file, SETTINGS_MOST_BYTES);
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text.replace(/^\uFEFF/, ""));
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

// What is watched while the agent runs: the feed the relay writes, and the folder of the run's session file.
function quotaFiles(query: QuotaQuery): string[] {
  const files = typeof query.feed === "string" && isAbsolute(query.feed) ? [query.feed] : [];
  const projects = projectsFolder(query.env);
  if (projects && typeof query.cwd === "string" && query.cwd) files.push(join(projects, folderName(resolved(query.cwd))));
  return files;
}

// The latest reading: each window of the last status the relay kept, and the allowance gone when a window is full or
// the run's own session file ends with its refusal at a limit.
function quota(query: QuotaQuery): NativeQuota | undefined {
  const status = typeof query.feed === "string" && isAbsolute(query.feed) ? feedStatus(query.feed) : undefined;
  const windows = status ? windowsOf(status) : [];
  const refused = query.started instanceof Date ? refusal(query) : undefined;
  const full = windows.find((window) => window.usedPercent >= 100);
  if (!windows.length && !refused) return undefined;
  const exhausted = refused ?? (full && { kind: spendKind(status, full.name) ?? WINDOWS[full.name]!.kind, ...(full.resetsAt ? { reset_at: full.resetsAt } : {}) });
  return { windows, ...(exhausted ? { exhausted } : {}) };
}

// The status JSON the relay last kept; undefined when there is none or it is not a JSON object.
function feedStatus(feed: string): Record<string, unknown> | undefined {
  const text = readTranscriptFile(feed, SETTINGS_MOST_BYTES);
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function windowsOf(status: Record<string, unknown>): NativeQuota["windows"] {
  const limits = status.rate_limits;
  if (!isRecord(limits)) return [];
  const windows: NativeQuota["windows"] = [];
  for (const [name, { minutes }] of Object.entries(WINDOWS)) {
    const window = limits[name];
    if (!isRecord(window) || typeof window.used_percentage !== "number" || !Number.isFinite(window.used_percentage)) continue;
    const resetsAt = fromUnixSeconds(window.resets_at);
    windows.push({ name, usedPercent: window.used_percentage, ...(resetsAt ? { resetsAt } : {}), ...(minutes ? { windowMinutes: minutes } : {}) });
  }
  return windows;
}

// A full spend limit is as long as its period, when the status names one.
function spendKind(status: Record<string, unknown> | undefined, name: string): string | undefined {
  const limits = status?.rate_limits;
  const period = name === "spend_limit" && isRecord(limits) && isRecord(limits.spend_limit) ? limits.spend_limit.period : undefined;
  return typeof period === "string" && SPEND_PERIODS.has(period) ? period : undefined;
}

// The refusal at a limit the run's own session file ends with: its words, the kind of limit and its exact reset.
// A refusal followed by an answer is over (the limit reset, or another model answered).
function refusal(query: QuotaQuery): NativeQuota["exhausted"] | undefined {
  // only the folder watched is looked in, and only the file's end read: a reading is taken within milliseconds
  const found = runFile(query, { from: query.started.getTime() - EARLY_MS, to: Date.now() + LATE_MS }, { maxBytes: QUOTA_TAIL_BYTES });
  const last = found?.run.filter((entry) => entry.type === "assistant" && entry.isSidechain !== true).at(-1);
  if (!last || last.isApiErrorMessage !== true || last.error !== "rate_limit") return undefined;
  const limit = [last.quotaLimits, isRecord(last.apiErrorParams) ? last.apiErrorParams.rate_limit_info : undefined].find(isRecord);
  const text = isRecord(last.message) ? partsOf(last.message.content).map((part) => (part.type === "text" && typeof part.text === "string" ? part.text : "")).join("\n").trim() : "";
  // the servers' own limiting is written the same way, marked transient and saying it is not the user's limit
  if (last.apiErrorIsTransient === true || NOT_USAGE.test(text) || (limit && typeof limit.status === "string" && limit.status !== "rejected")) return undefined;
  const kind = typeof limit?.rateLimitType === "string" ? LIMIT_KINDS[limit.rateLimitType] : undefined;
  const reset = fromUnixSeconds(limit?.resetsAt);
  return { ...(kind ? { kind } : {}), ...(reset ? { reset_at: reset } : {}), ...(text ? { text: cut(text, 2 * LONGEST) } : {}) };
}

// An instant given in Unix seconds, as an ISO date; undefined when it is not one.
function fromUnixSeconds(value: unknown): string | undefined {
  if (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > 1e11) return undefined;
  return new Date(value * 1000).toISOString();
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export default defineProvider({ classify, busy, conversation, transcript, launchSettings, quotaFiles, quota });
