import { randomBytes } from "node:crypto";
import { readlinkSync } from "node:fs";
import { lstat, mkdir, readdir, rename, rm, rmdir, writeFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";

import { describeKind, FileProblem, readRegularFile } from "../base/files.js";
import { jsonText } from "../base/json.js";
import { bootId, processRuns, processStarted } from "../base/process.js";
import { sleep } from "../base/time.js";

// Who holds a lock: enough for another process to tell whether that holder still runs.
export interface Holder {
  pid: number;
  token: string;
  host: string;
  // Linux only (null elsewhere): the boot, the pid namespace and the process's start time, against pid reuse
  boot: string | null;
  pidns: string | null;
  start: string | null;
  since: string;
}

export interface HeldLock {
  // the lock folder; what the holder writes inside it goes away with the lock
  path: string;
  token: string;
  // whether the lock on disk is still this one
  isOurs(): Promise<boolean>;
  release(): Promise<void>;
}

export type LockAttempt = { held: true; lock: HeldLock } | { held: false; reason: string };

export type HolderState = "alive" | "gone" | "foreign";

const HOLDER_FILE = "holder.json";

// Takes a lock folder that records its holder (pid, token, start time). A dead holder's lock is taken at once, a
// live holder's never, however old: after waitMs the answer is a reason instead of the lock. Something at the path
// that uuldana did not make (a file, a folder without a holder record) is a reason at once, never a wait.
export async function acquireLock(path: string, options: { waitMs: number }): Promise<LockAttempt> {
  const me = ownIdentity();
  const token = randomBytes(12).toString("hex");
  const holder: Holder = { pid: process.pid, token, host: me.host, boot: me.boot, pidns: me.pidns, start: me.start, since: new Date().toISOString() };
  // the record is complete before the lock exists: the folder is made aside, then renamed into place
  const staging = `${path}.${process.pid}.${token}.tmp`;
  const deadline = Date.now() + options.waitMs;
  let published = false;
  try {
    await stage(staging, holder);
    for (let attempt = 1; ; attempt++) {
      try {
        await rename(staging, path);
        published = true;
        return { held: true, lock: heldLock(path, token) };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // a waiter took the staging folder for a dead writer's leftover: make it again
        if (code === "ENOENT") await stage(staging, holder);
        else if (!["EEXIST", "ENOTEMPTY", "ENOTDIR", "EISDIR", "EPERM", "EBUSY"].includes(code ?? "")) throw error;
      }
      const found = await inspectLock(path, me);
      if (found.kind === "stray") return { held: false, reason: found.reason };
      if (found.kind === "held" && found.state !== "gone") {
        if (Date.now() >= deadline) return { held: false, reason: describeHolder(path, found.holder, found.state) };
        await sleep(5 + Math.random() * 20);
        continue;
      }
      // an empty folder (uuldana never makes one) or a dead holder's lock: clear it and try again at once
      if (found.kind === "empty") await rmdir(path).catch(() => undefined);
      if (found.kind === "held") await breakLock(path, found.holder);
      if (Date.now() >= deadline + options.waitMs) return { held: false, reason: `${path} kept changing hands; nothing was taken` };
      if (attempt % 8 === 0) await sleep(5);
    }
  } finally {
    if (!published) await rm(staging, { recursive: true, force: true }).catch(() => undefined);
  }
}

// --- internal ---

type Found =
  | { kind: "missing" }
  | { kind: "empty" }
  | { kind: "stray"; reason: string }
  | { kind: "held"; holder: Holder; state: HolderState };

interface Identity {
  host: string;
  boot: string | null;
  pidns: string | null;
  start: string | null;
}

let identity: Identity | undefined;

function ownIdentity(): Identity {
  identity ??= {
    host: hostname(),
    boot: process.platform === "linux" ? bootId() : null,
    pidns: readLink("/proc/self/ns/pid"),
    start: processStarted(process.pid) ?? null,
  };
  return identity;
}

async function stage(staging: string, holder: Holder): Promise<void> {
  await mkdir(staging, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "EEXIST") throw error;
  });
  await writeFile(join(staging, HOLDER_FILE), jsonText(holder) + "\n", { mode: 0o600 });
}

function heldLock(path: string, token: string): HeldLock {
  const isOurs = async (): Promise<boolean> => (await readHolder(path))?.token === token;
  return {
    path,
    token,
    isOurs,
    async release() {
      if (!(await isOurs())) return;
      // moved away in one step, so no one ever sees a lock folder without its record
      const away = `${path}.${process.pid}.${token}.tmp`;
      try {
        await rename(path, away);
      } catch {
        return;
      }
      await rm(away, { recursive: true, force: true }).catch(() => undefined);
    },
  };
}

// A folder without its record is looked at twice: between the failed read of the record and the listing of the
// folder, the lock may have been let go and another taken (whose record is there by the second look).
async function inspectLock(path: string, me: Identity, again = true): Promise<Found> {
  let info;
  try {
    info = await lstat(path);
  } catch {
    return { kind: "missing" };
  }
  const remove = `if no uuldana is running, remove it (rm -r ${path})`;
  if (!info.isDirectory()) return { kind: "stray", reason: `${path} is ${describeKind(info)}, not a lock uuldana made; ${remove}` };
  let text: string;
  try {
    text = await readRegularFile(join(path, HOLDER_FILE));
  } catch (error) {
    if (!(error instanceof FileProblem)) throw error;
    if (error.missing) {
      const names = await readdir(path).catch(() => undefined);
      if (!names) return { kind: "missing" };
      if (names.length === 0) return { kind: "empty" };
      if (again) {
        if (!names.includes(HOLDER_FILE)) await sleep(20);
        return inspectLock(path, me, false);
      }
    }
    return { kind: "stray", reason: `${path} is a folder without a holder record (${HOLDER_FILE}), not a lock uuldana made; ${remove}` };
  }
  const holder = parseHolder(text);
  if (!holder) return { kind: "stray", reason: `${join(path, HOLDER_FILE)} is not a holder record uuldana wrote; ${remove}` };
  return { kind: "held", holder, state: holderState(holder, me) };
}

async function readHolder(path: string): Promise<Holder | undefined> {
  try {
    return parseHolder(await readRegularFile(join(path, HOLDER_FILE)));
  } catch {
    return undefined;
  }
}

function parseHolder(text: string): Holder | undefined {
  let data: Partial<Holder>;
  try {
    data = JSON.parse(text) as Partial<Holder>;
  } catch {
    return undefined;
  }
  if (typeof data !== "object" || data === null) return undefined;
  if (!Number.isSafeInteger(data.pid) || data.pid! <= 0 || typeof data.token !== "string" || typeof data.host !== "string") return undefined;
  const optional = (value: unknown): string | null => (typeof value === "string" ? value : null);
  return {
    pid: data.pid!,
    token: data.token,
    host: data.host,
    boot: optional(data.boot),
    pidns: optional(data.pidns),
    start: optional(data.start),
    since: typeof data.since === "string" ? data.since : "",
  };
}

// A holder from another machine or another pid namespace (a container) cannot be checked from here: its lock
// counts as held. A different boot on the same host means the holder died in a reboot.
function holderState(holder: Holder, me: Identity): HolderState {
  if (holder.boot && me.boot) {
    if (holder.boot !== me.boot) return holder.host === me.host ? "gone" : "foreign";
  } else if (holder.host !== me.host) return "foreign";
  if (holder.pidns && me.pidns && holder.pidns !== me.pidns) return "foreign";
  return processRuns(holder.pid, holder.start) ? "alive" : "gone";
}

function describeHolder(path: string, holder: Holder, state: HolderState): string {
  const since = Number.isNaN(Date.parse(holder.since)) ? "" : ` (since ${new Date(holder.since).toISOString().replace("T", " ").slice(0, 19)} UTC)`;
  if (state === "foreign") {
    const where = holder.host !== ownIdentity().host ? `on host "${holder.host}"` : "in another container (pid namespace)";
    return `it is locked by process ${holder.pid} ${where}${since}, which uuldana cannot check from here; if no uuldana runs there, remove the lock (rm -r ${path})`;
  }
  return `it is locked by process ${holder.pid}${since}, which is still running`;
}

// A dead holder's lock is moved aside in one step, and only while it is still that holder's: two waiters that
// both found it dead cannot both take it, and a lock taken meanwhile by a live process is put back.
async function breakLock(path: string, dead: Holder): Promise<void> {
  const grave = `${path}.${dead.pid}.${dead.token}.tmp`;
  if ((await readHolder(path))?.token !== dead.token) return;
  try {
    await rename(path, grave);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // an earlier move of the same dead lock was left behind
    if ((code === "ENOTEMPTY" || code === "EEXIST") && (await readHolder(grave))?.token === dead.token) {
      await rm(grave, { recursive: true, force: true }).catch(() => undefined);
    }
    return;
  }
  if ((await readHolder(grave))?.token !== dead.token) {
    await rename(grave, path).catch(() => undefined);
    return;
  }
  await rm(grave, { recursive: true, force: true }).catch(() => undefined);
}


function readLink(file: string): string | null {
  try {
    return readlinkSync(file);
  } catch {
    return null;
  }
}
