import { appendFileSync, closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, readSync, readlinkSync, renameSync, statSync, unlinkSync, writeFileSync, type Stats } from "node:fs";
import { join } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { fileOnPath, removeLeftovers } from "../base/files.js";
import { escapeJsonControls } from "../base/json.js";
import { safeFileText } from "../base/safe-text.js";
import { Redactor } from "../config/redaction.js";

// The session journal: sessions/<id>/journal.jsonl, one JSON event a line, appended and flushed as things happen,
// so a crash can tear at most the last line. Every text it keeps, and every file it saves, goes through the session's
// redactor: entries' env values and redact matches never reach them.
export class Journal {
  readonly folder: string;
  readonly file: string;
  private readonly fd: number;

  // With a first event, a journal that does not exist yet is created with that event in the same call: uuldana
  // killed in its first moments leaves no journal, or one with its start, never an empty one.
  constructor(
    dataDir: string,
    sessionId: string,
    private readonly redactor: Redactor = new Redactor(),
    first?: { type: string; fields: Record<string, unknown> },
  ) {
    this.folder = join(dataDir, "sessions", sessionId);
    this.file = join(this.folder, "journal.jsonl");
    let pending = first;
    try {
      mkdirSync(this.folder, { recursive: true, mode: 0o700 });
      if (first && !existsSync(this.file)) pending = createWith(this.file, this.line(first.type, first.fields)) ? undefined : first;
      this.fd = openSync(this.file, "a+", 0o600);
      if (first && !pending) fsyncSync(this.fd);
    } catch (error) {
      // a data folder uuldana may not write (its permissions, a read-only or full disk): no session can be kept
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new UuldanaError("E_JOURNAL_UNWRITABLE", `cannot write the session journal ${this.file} (${code})`, {
        hint: code === "EACCES" || code === "EPERM" ? "uuldana must be able to write its data folder: check its owner and permissions" : "check the data folder and the disk that holds it",
        cause: error,
      });
    }
    // a journal whose last line a crash tore (kill -9 mid-write) loses that part-line, which nothing can read, so
    // the next event starts a line of its own and every line before it parses
    dropTornLine(this.fd);
    // and the files a killed uuldana was replacing are left half-written beside the whole ones
    removeLeftovers(this.folder);
    if (pending) this.write(pending.type, pending.fields);
  }

  write(type: string, fields: Record<string, unknown> = {}): void {
    appendFileSync(this.fd, this.line(type, fields));
    fsyncSync(this.fd);
  }

  // Saves a file in the session folder by replacing it whole (temporary file, then rename).
  save(name: string, text: string): string {
    return saveSessionFile(this.folder, name, this.redactor.redact(text));
  }

  close(): void {
    closeSync(this.fd);
  }

  // --- internal ---

  // One event as a line: its texts redacted, and no raw control character (jsonText's escapes) in it.
  private line(type: string, fields: Record<string, unknown>): string {
    const line = JSON.stringify({ at: new Date().toISOString(), type, ...fields }, (_key, value: unknown) =>
      typeof value === "string" ? this.redactor.redact(value) : value,
    );
    return escapeJsonControls(line) + "\n";
  }
}

// Replaces a file in a session's folder whole (temporary file, then rename), readable by its owner only: for the
// journal's files and for what a command writes there without opening the journal. No raw control character reaches
// it: JSON (.json, .jsonl) has them as \u escapes, which read back as the same strings; text keeps its line breaks
// and tabs and has every other control escaped the way uuldana prints one.
export function saveSessionFile(folder: string, name: string, text: string): string {
  const file = join(folder, name);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, /\.jsonl?$/.test(name) ? escapeJsonControls(text) : safeFileText(text), { mode: 0o600 });
  renameSync(temp, file);
  return file;
}

// Makes the journal with its first line already in it: the line goes to a temporary file that is then linked into
// place, so the journal never exists without it (a kill between opening a file and writing it left an empty one).
// False when another writer made the journal first.
function createWith(file: string, line: string): boolean {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, line, { mode: 0o600 });
  try {
    linkSync(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    unlinkSync(temp);
  }
}

function dropTornLine(fd: number): void {
  const size = fstatSync(fd).size;
  if (size === 0) return;
  // a line is far shorter than this; the tail read is enough to find where the torn one began
  const tail = Buffer.alloc(Math.min(size, 1 << 20));
  readSync(fd, tail, 0, tail.length, size - tail.length);
  if (tail[tail.length - 1] === 0x0a) return;
  const lastBreak = tail.lastIndexOf(0x0a);
  ftruncateSync(fd, lastBreak === -1 ? size - tail.length : size - tail.length + lastBreak + 1);
}

export interface JournalEvent {
  at: string;
  type: string;
  [field: string]: unknown;
}

export interface JournalReading {
  // the events that could be read, in order
  events: JournalEvent[];
  // what is wrong with the journal, when it is damaged; undefined when it reads whole
  damage: string | undefined;
}

// Reads a journal; a last line torn by a crash (the only line a crash can tear) is skipped.
export function readJournal(file: string): JournalEvent[] {
  return inspectJournal(file).events;
}

// Reads a journal and says what is wrong with it, if anything: a journal that is not a readable file, is empty or
// binary, or holds a line that is not an event (a JSON object with a "type" and an "at" time) is damaged, and the
// reason names the line. It never throws and never waits: a FIFO is not opened.
export function inspectJournal(file: string): JournalReading {
  const unreadable = (damage: string): JournalReading => ({ events: [], damage });
  let info: Stats;
  try {
    info = statSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT") return unreadable(`journal.jsonl cannot be read (${code ?? (error as Error).message})`);
    return unreadable(isSymlink(file) ? "journal.jsonl is a symlink to a file that does not exist" : "there is no journal.jsonl");
  }
  if (info.isDirectory()) return unreadable("journal.jsonl is a folder, not a file");
  if (!info.isFile()) return unreadable("journal.jsonl is not a regular file");
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    return unreadable(`journal.jsonl cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  let text: string;
  try {
    // what uuldana writes is always UTF-8 text without a NUL
    if (bytes.includes(0)) throw new Error("NUL");
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return unreadable("journal.jsonl holds binary data, not JSON lines");
  }
  if (!text.trim()) return unreadable("journal.jsonl is empty");
  const lines = text.split("\n");
  // a line the crash tore has no newline after it
  const last = text.endsWith("\n") ? -1 : lines.length - 1;
  const events: JournalEvent[] = [];
  let damage: string | undefined;
  lines.forEach((line, index) => {
    if (!line.trim()) return;
    const problem = eventProblem(line);
    if (typeof problem !== "string") events.push(problem);
    else if (!(index === last && events.length > 0)) damage ??= `line ${index + 1} ${problem}`;
  });
  if (!damage && !events.some((event) => event.type === "session-start" || event.type === "session-resume")) damage = "it has no session-start event";
  return { events, damage };
}

// The sessions folder, if there is one yet; a file (or anything else that is not a folder) in its place is the
// user's to move, and uuldana says so rather than failing on it.
export function checkSessionsFolder(dataDir: string): boolean {
  const folder = join(dataDir, "sessions");
  let info: Stats;
  try {
    info = statSync(folder);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const blocking = code === "ENOTDIR" ? fileOnPath(folder) : undefined;
    if (blocking) throw notAFolder(folder, `cannot be made: ${blocking} is a file, not a folder`, `move it away (mv "${blocking}" "${blocking}.old"), or set UULDANA_DATA_DIR to a folder`);
    if (code !== "ENOENT") throw notAFolder(folder, `cannot be read (${code})`, "check the folder's permissions", error);
    if (!isSymlink(folder)) return false;
    throw notAFolder(folder, `is a symlink to ${readlinkSync(folder)}, which does not exist`, `remove the symlink (rm "${folder}") or make the folder it names; uuldana keeps its sessions there`);
  }
  if (info.isDirectory()) return true;
  const what = info.isFile() ? "a file" : "something other than a folder";
  const is = isSymlink(folder) ? `is a symlink to ${what} (${readlinkSync(folder)}), not to a folder` : `is ${what}, not a folder`;
  throw notAFolder(folder, is, `move it away (mv "${folder}" "${folder}.old"); uuldana makes the folder again at the next run`);
}

// --- internal ---

function eventProblem(line: string): JournalEvent | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return "is not JSON (cut off or overwritten)";
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return "is not a JSON object";
  const event = value as Record<string, unknown>;
  if (typeof event.type !== "string") return `has no "type"`;
  if (typeof event.at !== "string" || Number.isNaN(Date.parse(event.at))) return `has no time: "at" is ${JSON.stringify(event.at) ?? "missing"}`;
  return event as JournalEvent;
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function notAFolder(folder: string, is: string, hint: string, cause?: unknown): UuldanaError {
  return new UuldanaError("E_SESSIONS_FOLDER_UNUSABLE", `${folder} ${is}: uuldana keeps its sessions in this folder`, { hint, cause });
}
