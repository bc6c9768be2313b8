import { randomBytes } from "node:crypto";
import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

import { FileProblem, readRegularFile } from "../base/files.js";
import { jsonText } from "../base/json.js";
import { rowJson, toCooldown, type Cooldown } from "./cooldown-rows.js";

// Rests that could not be written to the cooldown table when they were seen (another writer held its lock longer
// than a failover may wait): each is saved at once, without the lock, as a file of its own beside the table,
// cooldowns.json.pending-<random> (0600, written whole then renamed into place), so it outlives the process that
// saw it. Every reader of the table counts these rests; the next writer holding the lock merges them into the table
// by its rule (cooldown-rows.ts) and removes them.

export interface PendingRests {
  file: string;
  // when the file was written: the time its rests count from if they carry none of their own
  made: Date;
  rests: Map<string, Cooldown>;
}

export interface PendingFound {
  found: PendingRests[];
  // files by the pending name that are not rests uuldana saved (damaged, or not a file)
  bad: { file: string; reason: string }[];
}

const PREFIX = "cooldowns.json.pending-";
const NAME = /^cooldowns\.json\.pending-[0-9a-f]{24}$/;
// far more than any set of rests needs; a larger file is not one uuldana saved
const MAX_BYTES = 1 << 20;

// Whether a name in the data dir is a rest saved beside the table.
export function isPendingName(name: string): boolean {
  return NAME.test(name);
}

// Saves rests beside the table in the data dir; returns the file. Throws the system's error when it cannot.
export async function savePending(dataDir: string, rests: ReadonlyMap<string, Cooldown>, made: Date): Promise<string> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const token = randomBytes(12).toString("hex");
  const file = join(dataDir, `${PREFIX}${token}`);
  // a temporary file by the table's leftover name: a writer that finds it after this process died removes it
  const temp = join(dataDir, `cooldowns.json.${process.pid}.${token}.tmp`);
  const rows = Object.fromEntries([...rests].map(([key, row]) => [key, rowJson(row)]));
  try {
    await writeFile(temp, jsonText({ version: 1, made: made.toISOString(), rests: rows }, 2) + "\n", { mode: 0o600, flag: "wx" });
    await rename(temp, file);
  } finally {
    await rm(temp, { force: true }).catch(() => undefined);
  }
  return file;
}

// The rests saved beside the table, read now. Never waits on what a path holds (a named pipe is not opened).
export async function readPending(dataDir: string): Promise<PendingFound> {
  const names = (await readdir(dataDir).catch(() => [] as string[])).filter(isPendingName).sort();
  const found: PendingRests[] = [];
  const bad: PendingFound["bad"] = [];
  for (const name of names) {
    const file = join(dataDir, name);
    let text: string;
    try {
      text = await readRegularFile(file, MAX_BYTES);
    } catch (error) {
      if (!(error instanceof FileProblem)) throw error;
      // merged and removed by a writer since the folder was listed: its rests are in the table now
      if (!error.missing) bad.push({ file, reason: error.reason });
      continue;
    }
    const pending = parsePending(file, text);
    if (pending) found.push(pending);
    else bad.push({ file, reason: "is not a rest uuldana saved" });
  }
  return { found, bad };
}

// Removes pending files a writer merged into the table it wrote; one already gone is fine.
export async function removePending(files: readonly string[]): Promise<void> {
  for (const file of files) await rm(file, { force: true }).catch(() => undefined);
}

// Moves a file that is not a rest uuldana saved out of the way, beside it; returns where it is now.
export async function setAside(file: string): Promise<string> {
  const aside = `${file}.bad`;
  await rename(file, aside);
  return aside;
}

// --- internal ---

function parsePending(file: string, text: string): PendingRests | undefined {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  const { version, made, rests } = (data ?? {}) as { version?: unknown; made?: unknown; rests?: unknown };
  const time = new Date(String(made));
  if (version !== 1 || Number.isNaN(time.getTime()) || typeof rests !== "object" || rests === null) return undefined;
  const rows = new Map<string, Cooldown>();
  for (const [key, value] of Object.entries(rests as Record<string, unknown>)) {
    const row = toCooldown(value);
    if (row) rows.set(key, row);
  }
  return { file, made: time, rests: rows };
}
