import { appendFileSync, closeSync, fsyncSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";

// The session journal: sessions/<id>/journal.jsonl, one JSON event a line, appended and flushed as things happen,
// so a crash can tear at most the last line. Entries' environment values never reach it.
export class Journal {
  readonly folder: string;
  readonly file: string;
  private readonly fd: number;

  constructor(dataDir: string, sessionId: string) {
    this.folder = join(dataDir, "sessions", sessionId);
    mkdirSync(this.folder, { recursive: true, mode: 0o700 });
    this.file = join(this.folder, "journal.jsonl");
    this.fd = openSync(this.file, "a", 0o600);
  }

  write(type: string, fields: Record<string, unknown> = {}): void {
    appendFileSync(this.fd, JSON.stringify({ at: new Date().toISOString(), type, ...fields }) + "\n");
    fsyncSync(this.fd);
  }

  close(): void {
    closeSync(this.fd);
  }
}
