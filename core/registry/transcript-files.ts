import { closeSync, fstatSync, lstatSync, openSync, readdirSync, readSync } from "node:fs";
import { join } from "node:path";

import { OPEN_FLAGS } from "../base/files.js";

// Reading an agent's own session files, for adapters' transcript hooks: bounded in size, never waiting on a pipe or
// a device put where a file was, and quiet about what is not there (the hook then has no transcript).

// The largest session file read whole; a longer one is read from its end (the run's part is the newest).
export const TRANSCRIPT_MAX_BYTES = 64 * 1024 * 1024;

// how much of a file's start is read at a time while its first line is looked for
const FIRST_LINE_CHUNK = 64 * 1024;

// One regular file in a folder, with when it was last written.
export interface FoundFile {
  file: string;
  name: string;
  modifiedMs: number;
}

// The text of a regular file, at most maxBytes of it (the last ones, from the first whole line among them);
// undefined when it is missing, not a regular file or unreadable.
export function readTranscriptFile(file: string, maxBytes = TRANSCRIPT_MAX_BYTES): string | undefined {
  return withRegularFile(file, (fd, size) => {
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.allocUnsafe(length);
    let read = 0;
    while (read < length) {
      const got = readSync(fd, buffer, read, length - read, size - length + read);
      if (got === 0) break;
      read += got;
    }
    const text = buffer.toString("utf8", 0, read);
    return length < size ? text.slice(text.indexOf("\n") + 1) : text;
  });
}

// The first line of a regular file, without its line feed, when it ends within maxBytes (a session file's header
// record); undefined when the file is missing, not a regular file, unreadable, or its first line is longer.
export function readFirstLine(file: string, maxBytes: number): string | undefined {
  return withRegularFile(file, (fd) => {
    const chunks: Buffer[] = [];
    let read = 0;
    while (read < maxBytes) {
      const chunk = Buffer.allocUnsafe(Math.min(FIRST_LINE_CHUNK, maxBytes - read));
      const got = readSync(fd, chunk, 0, chunk.length, read);
      if (got === 0) return undefined;
      const end = chunk.subarray(0, got).indexOf(0x0a);
      chunks.push(chunk.subarray(0, end === -1 ? got : end));
      if (end !== -1) return Buffer.concat(chunks).toString("utf8");
      read += got;
    }
    return undefined;
  });
}

// Each line of a JSON Lines text that parses, in order; a line that does not (a line torn by the agent's own
// writing, a blank) is passed over.
export function jsonLines(text: string): unknown[] {
  const values: unknown[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      values.push(JSON.parse(line));
    } catch {
      // not a whole line
    }
  }
  return values;
}

// The regular files directly in a folder whose names match, newest first; none when the folder cannot be listed.
// Links are not followed: a session file is the agent's own, where it wrote it.
export function filesIn(folder: string, name: RegExp): FoundFile[] {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return [];
  }
  const found: FoundFile[] = [];
  for (const entry of names) {
    if (!name.test(entry)) continue;
    const file = join(folder, entry);
    try {
      const info = lstatSync(file);
      if (info.isFile()) found.push({ file, name: entry, modifiedMs: info.mtimeMs });
    } catch {
      // gone meanwhile
    }
  }
  return found.sort((a, b) => b.modifiedMs - a.modifiedMs);
}

// Opens a file for reading only if it is a regular file (never waiting on a pipe), reads it, and closes it; undefined
// when it is missing, not a regular file, or the reading fails.
function withRegularFile<T>(file: string, read: (fd: number, size: number) => T | undefined): T | undefined {
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch {
    return undefined;
  }
  try {
    const info = fstatSync(fd);
    return info.isFile() ? read(fd, info.size) : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
