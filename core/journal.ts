import { appendFileSync, closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { Redactor } from "./redaction.js";

// The session journal: sessions/<id>/journal.jsonl, one JSON event a line, appended and flushed as things happen,
// so a crash can tear at most the last line. Every text it keeps, and every file it saves, goes through the session's
// redactor: entries' env values and redact matches never reach them.
export class Journal {
  readonly folder: string;
  readonly file: string;
  private readonly fd: number;

  constructor(dataDir: string, sessionId: string, private readonly redactor: Redactor = new Redactor()) {
    this.folder = join(dataDir, "sessions", sessionId);
    mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    this.file = join(this.folder, "journal.jsonl");
    this.fd = openSync(this.file, "a", 0o600);
  }

  write(type: string, fields: Record<string, unknown> = {}): void {
    const line = JSON.stringify({ at: new Date().toISOString(), type, ...fields }, (_key, value: unknown) =>
      typeof value === "string" ? this.redactor.redact(value) : value,
    );
    appendFileSync(this.fd, line + "\n");
    fsyncSync(this.fd);
  }

  // Saves a file in the session folder by replacing it whole (temporary file, then rename).
  save(name: string, text: string): string {
    const file = join(this.folder, name);
    writeFileSync(`${file}.tmp`, this.redactor.redact(text), { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
    return file;
  }

  close(): void {
    closeSync(this.fd);
  }
}

export interface JournalEvent {
  at: string;
  type: string;
  [field: string]: unknown;
}

// Reads a journal; a line torn by a crash (or anything not a JSON object) is skipped.
export function readJournal(file: string): JournalEvent[] {
  const events: JournalEvent[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    try {
      const event = JSON.parse(line) as JournalEvent;
      if (event && typeof event === "object" && typeof event.type === "string") events.push(event);
    } catch {
      // a torn last line
    }
  }
  return events;
}
