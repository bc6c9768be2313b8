import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, type Stats } from "node:fs";
import { open, stat } from "node:fs/promises";
import { dirname, join } from "node:path";

import { processRuns } from "./process.js";

// Why a file uuldana expected could not be read: missing (nothing at the path, not even a link) or not a file. Its
// cause is the system's own error, kept where the reason only names the error's code (ELOOP, EACCES, EIO…).
export class FileProblem extends Error {
  readonly file: string;
  readonly missing: boolean;
  // what is wrong, as the end of a sentence about the file: "is a folder, not a file"
  readonly reason: string;
  // how to fix it, as a hint
  readonly fix: string;

  constructor(file: string, reason: string, fix: string, missing = false, cause?: unknown) {
    super(`${file} ${reason}`, cause === undefined ? undefined : { cause });
    this.name = "FileProblem";
    this.file = file;
    this.reason = reason;
    this.fix = fix;
    this.missing = missing;
  }
}

// A named pipe opens at once and reads nothing instead of waiting for a writer; a terminal never becomes ours.
export const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

// Reads a file that must be a regular file (a link to one is fine); anything else is a FileProblem, never a hang.
// With maxBytes, a file longer than that is a FileProblem too, found without reading more than one byte past it.
export async function readRegularFile(file: string, maxBytes?: number): Promise<string> {
  let handle;
  try {
    handle = await open(file, OPEN_FLAGS);
  } catch (error) {
    throw explainOpenError(file, error);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw notAFile(file, info);
    if (maxBytes === undefined) return await handle.readFile("utf8");
    if (info.size > maxBytes) throw tooLarge(file, maxBytes);
    // the file may grow between the stat and the read: read one byte more than allowed to see it did
    const buffer = Buffer.allocUnsafe(maxBytes + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) throw tooLarge(file, maxBytes);
    return buffer.toString("utf8", 0, length);
  } finally {
    await handle.close();
  }
}

// The same for code that must stay synchronous.
export function readRegularFileSync(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (error) {
    throw explainOpenError(file, error);
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw notAFile(file, info);
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

// Looks at a path without opening it: undefined when nothing is there, a FileProblem when it is not a regular file.
export async function checkRegularFile(file: string): Promise<FileProblem | undefined> {
  let info: Stats;
  try {
    info = await stat(file);
  } catch (error) {
    const problem = explainOpenError(file, error);
    return problem.missing ? undefined : problem;
  }
  return info.isFile() ? undefined : notAFile(file, info);
}

// What kind of thing a path holds, for messages: "a folder", "a named pipe (FIFO)".
export function describeKind(info: Stats): string {
  if (info.isDirectory()) return "a folder";
  if (info.isFIFO()) return "a named pipe (FIFO)";
  if (info.isSocket()) return "a socket";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "a device";
  if (info.isSymbolicLink()) return "a symbolic link";
  return "a file";
}

// The file that stands where a folder on a path should be (the cause of ENOTDIR), or undefined when there is none.
export function fileOnPath(path: string): string | undefined {
  let blocking: string | undefined;
  for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      if (!statSync(dir).isDirectory()) blocking = dir;
    } catch {
      // not there: nothing blocks at this level
    }
  }
  return blocking;
}

// Removes what writers that died left beside a file: "<base>.<pid>.<anything>.tmp" files and folders whose pid no
// longer runs (every base when none is given). A live writer's temporary is never touched.
export function removeLeftovers(folder: string, base?: string): void {
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.endsWith(".tmp") || (base !== undefined && !name.startsWith(`${base}.`))) continue;
    const rest = base === undefined ? name : name.slice(base.length + 1);
    const pid = Number((base === undefined ? /\.(\d+)(?:\.[^.]*)?\.tmp$/ : /^(\d+)\./).exec(rest)?.[1] ?? 0);
    if (pid <= 0 || pid === process.pid || processRuns(pid)) continue;
    rmSync(join(folder, name), { recursive: true, force: true });
  }
}

// --- internal ---

function tooLarge(file: string, maxBytes: number): FileProblem {
  return new FileProblem(file, `is larger than ${maxBytes} bytes`, "replace it with a smaller file, or remove it");
}

function notAFile(file: string, info: Stats): FileProblem {
  return new FileProblem(file, `is ${describeKind(info)}, not a file`, "replace it with a regular file, or remove it");
}

// lstat, readlink and stat never wait on what a path holds, so the explanation can be synchronous everywhere.
function explainOpenError(file: string, error: unknown): FileProblem {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "ENOENT") {
    let link = false;
    try {
      link = lstatSync(file).isSymbolicLink();
    } catch {
      // nothing at the path
    }
    if (!link) return new FileProblem(file, "does not exist", "create it", true);
    let target = "?";
    try {
      target = readlinkSync(file);
    } catch {
      // gone meanwhile
    }
    return danglingLink(file, target);
  }
  if (code === "EISDIR" || code === "EPERM") {
    try {
      const info = statSync(file);
      if (!info.isFile()) return notAFile(file, info);
    } catch {
      // fall through to the code
    }
  }
  return explainCode(file, code, error);
}

function danglingLink(file: string, target: string): FileProblem {
  return new FileProblem(file, `is a symbolic link to ${target}, which does not exist`, "point the link at an existing file, or remove it");
}

function explainCode(file: string, code: string | undefined, error: unknown): FileProblem {
  switch (code) {
    case "ELOOP":
      return new FileProblem(file, "is a symbolic link that loops (ELOOP)", "point the link at an existing file, or remove it", false, error);
    case "EISDIR":
      return new FileProblem(file, "is a folder, not a file", "replace it with a regular file, or remove it");
    case "ENXIO":
      return new FileProblem(file, "is a socket, not a file", "replace it with a regular file, or remove it");
    case "EACCES":
    case "EPERM":
      return new FileProblem(file, "cannot be read (permission denied)", "check the file's permissions: uuldana must be able to read it", false, error);
    case "ENOTDIR": {
      const blocking = fileOnPath(file);
      return blocking
        ? new FileProblem(file, `cannot be reached: ${blocking} on its path is a file, not a folder`, `move ${blocking} away, or point uuldana at another folder`)
        : new FileProblem(file, "cannot be reached: a folder on its path is a file", "check the folders on the path");
    }
    default:
      return new FileProblem(file, `cannot be read (${code ?? String(error)})`, "check the file and the folder that holds it", false, error);
  }
}
