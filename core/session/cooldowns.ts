import { watch, type FSWatcher } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

import { FileProblem, readRegularFile, removeLeftovers } from "../base/files.js";
import { findDuplicateKeys, JsonTooDeep, type DuplicateKey } from "../base/json.js";
import { acquireLock } from "./lock.js";

// One resting entry, as stored in cooldowns.json.
export interface Cooldown {
  until: Date;
  since: Date | undefined;
  source: "inferred" | "native" | "manual";
  kind: string | undefined;
  text: string | undefined;
  // a rest of one model only (the row keyed "<entry>@<model>"): the entry runs, on another model
  model?: string | undefined;
}

export interface CooldownTable {
  file: string;
  entries: Map<string, Cooldown>;
  problem: string | undefined;
  // what the problem means: not a file (left alone, never written), damaged (kept aside at the next write), or a
  // row given twice (the longer rest is used; the next write keeps one)
  fault?: "not-a-file" | "damaged" | "doubled" | undefined;
  // the fault alone, without what follows from it; and how to fix it, when the user has to
  what?: string;
  fix?: string | undefined;
}

// What became of a change: written to the table, or kept in this process to be written at the next chance.
export interface CooldownWrite {
  written: boolean;
  // something to tell the user, once: why it is not written yet, or what was wrong with the table
  notice: string | undefined;
}

export interface UpdateOptions {
  // how long to wait for another writer's lock (1 s by default)
  waitMs?: number;
  // keep a change that could not be written and retry it (the default); false: it is dropped and said so
  keep?: boolean;
}

export type CooldownChange = (entries: Map<string, Cooldown>) => void;

const LOCK_WAIT_MS = 1000;
const RETRY_MS = [1000, 2000, 5000, 15_000, 60_000];

// Reads the cooldown table; a missing file is empty, a bad one is reported and treated as empty. Changes this
// process could not write yet are included: they count, here, as if they were in the file.
export async function readCooldowns(dataDir: string): Promise<CooldownTable> {
  const table = await readTable(join(dataDir, "cooldowns.json"));
  for (const change of pending.get(table.file) ?? []) change(table.entries);
  return table;
}

// Calls onChange whenever the cooldown table in the data dir is replaced or changed (by this uuldana, another one, or
// "cooldowns clear"): its folder is watched through the operating system, for the table's name. Returns the closer;
// a folder that cannot be watched is not watched.
export function watchCooldowns(dataDir: string, onChange: () => void): () => void {
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dataDir, (_event, name) => {
      if (name === null || String(name) === "cooldowns.json") onChange();
    });
    watcher.on("error", () => watcher?.close());
  } catch {
    // nothing to watch: whoever relies on it also reads the table at its own times
  }
  return () => watcher?.close();
}

// When an entry stops resting, or undefined when it is not resting at this moment.
export function restingUntil(table: CooldownTable, key: string, now: Date): Date | undefined {
  const row = table.entries.get(key);
  return row && row.until.getTime() > now.getTime() ? row.until : undefined;
}

// Changes the table under its lock (see lock.ts): re-reads it, applies the change, drops expired rows, writes the
// new table inside the lock folder and renames it over the old one once the lock is still ours. Waits for
// another writer at most waitMs: then the change is kept, said so once, and written at the next update, by a
// retry in the background, or by writePendingCooldowns before the process exits — a failover never waits longer.
export async function updateCooldowns(
  dataDir: string,
  change: CooldownChange,
  now: Date = new Date(),
  options: UpdateOptions = {},
): Promise<CooldownWrite> {
  const file = join(dataDir, "cooldowns.json");
  return inTurn(file, async () => {
    const changes = [...(pending.get(file) ?? []), change];
    const outcome = await writeTable(file, changes, now, options.waitMs ?? LOCK_WAIT_MS);
    if (outcome.written) {
      pending.delete(file);
      return outcome;
    }
    if (options.keep === false || outcome.retry === false) return { written: false, notice: outcome.notice };
    pending.set(file, changes);
    scheduleRetry(file, 0);
    return { written: false, notice: `${outcome.notice}; uuldana keeps the change and writes it as soon as it can` };
  });
}

// The last chance for changes not written yet, called by the CLI once its command is done: one more try each, and
// for what still cannot be written, a notice to print (nobody else is left to tell).
export async function writePendingCooldowns(): Promise<string[]> {
  const notices: string[] = [];
  for (const [file, changes] of [...pending]) {
    clearTimeout(retries.get(file));
    retries.delete(file);
    const outcome = await inTurn(file, () => writeTable(file, changes, new Date(), LOCK_WAIT_MS));
    pending.delete(file);
    if (!outcome.written) {
      const what = changes.length === 1 ? "a change" : `${changes.length} changes`;
      notices.push(`${what} to the cooldown table could not be written before exit: ${outcome.notice}`);
    }
  }
  return notices;
}

// --- internal ---

// changes not written yet, by table file, in the order they were made
const pending = new Map<string, CooldownChange[]>();
// one write at a time per table in this process
const turns = new Map<string, Promise<unknown>>();
const retries = new Map<string, NodeJS.Timeout>();

function inTurn<T>(file: string, work: () => Promise<T>): Promise<T> {
  const next = (turns.get(file) ?? Promise.resolve()).then(work, work);
  turns.set(file, next.catch(() => undefined));
  return next;
}

function scheduleRetry(file: string, attempt: number): void {
  if (!retries.has(file)) {
    const timer = setTimeout(() => {
      retries.delete(file);
      void inTurn(file, async () => {
        const changes = pending.get(file);
        if (!changes) return;
        const outcome = await writeTable(file, changes, new Date(), LOCK_WAIT_MS);
        if (outcome.written) pending.delete(file);
        else scheduleRetry(file, attempt + 1);
      });
    }, RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]);
    // a retry never keeps uuldana running: the last chance is writePendingCooldowns, just before the process exits
    timer.unref();
    retries.set(file, timer);
  }
}

// retry: false when waiting cannot help and the user was told what to fix
async function writeTable(file: string, changes: CooldownChange[], now: Date, waitMs: number): Promise<CooldownWrite & { retry?: boolean }> {
  const dataDir = dirname(file);
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const attempt = await acquireLock(`${file}.lock`, { waitMs });
    if (!attempt.held) return { written: false, notice: `cannot write ${file} now: ${attempt.reason}` };
    const { lock } = attempt;
    try {
      // what writers killed mid-write left: earlier temporary files and lock folders of processes that are gone
      removeLeftovers(dataDir, "cooldowns.json");
      removeLeftovers(dataDir, "cooldowns.json.lock");
      const table = await readTable(file);
      if (table.fault === "not-a-file") return { written: false, notice: `${table.what}; it cannot be written: ${table.fix}`, retry: false };
      let notice = table.fault === "doubled" ? `${table.what}; the table now has one` : undefined;
      if (table.fault === "damaged") {
        const aside = `${file}.bad-${now.toISOString().replace(/[:.]/g, "-")}`;
        await rename(file, aside);
        notice = `${table.problem}; it was kept as ${aside}`;
      }
      for (const change of changes) change(table.entries);
      const temp = join(lock.path, "cooldowns.json.tmp");
      await writeFile(temp, serialize(table.entries, now), { mode: 0o600 });
      if (!(await lock.isOurs())) return { written: false, notice: `cannot write ${file} now: its lock was taken over` };
      // the temporary file lives in the lock folder: had the lock been moved away since, this rename finds nothing
      await rename(temp, file);
      return { written: true, notice };
    } finally {
      await lock.release().catch(() => undefined);
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return { written: false, notice: `cannot write ${file} now (${code})` };
  }
}

function serialize(entries: Map<string, Cooldown>, now: Date): string {
  const rows: Record<string, unknown> = {};
  for (const [key, row] of entries) {
    if (row.until.getTime() <= now.getTime()) continue;
    rows[key] = {
      until: row.until.toISOString(),
      since: row.since?.toISOString() ?? null,
      source: row.source,
      kind: row.kind ?? null,
      text: row.text ?? null,
      ...(row.model ? { model: row.model } : {}),
    };
  }
  return JSON.stringify({ version: 1, entries: rows }, null, 2) + "\n";
}

// The table as stored, and what is wrong with it (what: the fault itself, without what follows from it).
async function readTable(file: string): Promise<CooldownTable> {
  const entries = new Map<string, Cooldown>();
  const none = { file, entries, problem: undefined, fault: undefined, fix: undefined };
  const damaged = (what: string): CooldownTable => ({ ...none, fault: "damaged", what, problem: `${what}; no entry is treated as resting` });
  let text: string;
  try {
    text = await readRegularFile(file);
  } catch (error) {
    if (!(error instanceof FileProblem)) throw error;
    if (error.missing) return none;
    if (error.reason.startsWith("cannot be read")) return damaged(`${file} ${error.reason}`);
    const what = `the cooldown table ${file} ${error.reason}`;
    const fix = error.reason.startsWith("is ") ? `remove it (rm -r ${file}); uuldana writes a new table at the next rest` : error.fix;
    return { ...none, fault: "not-a-file", what, fix, problem: `${what}; no entry is treated as resting, and no rest can be written until it is fixed: ${fix}` };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return damaged(`${file} is not valid JSON`);
  }
  const rows = (data as { entries?: unknown } | null)?.entries;
  if (typeof rows !== "object" || rows === null) return damaged(`${file} has no "entries" object`);
  let duplicates;
  try {
    duplicates = findDuplicateKeys(text);
  } catch (error) {
    if (error instanceof JsonTooDeep) return damaged(`${file} is nested too deeply`);
    throw error;
  }
  for (const [key, row] of Object.entries(rows as Record<string, unknown>)) {
    const cooldown = toCooldown(row);
    if (cooldown) entries.set(key, cooldown);
  }
  if (duplicates.length === 0) return none;
  // uuldana never writes a row twice; of two rows for one entry, the longer rest is the safe one to keep
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const isRow = (duplicate: DuplicateKey): boolean => duplicate.path.length === 1 && duplicate.path[0] === "entries";
  for (const duplicate of duplicates.filter(isRow)) {
    const earlier = toCooldown(JSON.parse(source.slice(duplicate.first.valueStart, duplicate.first.valueEnd)));
    const later = entries.get(duplicate.key);
    if (earlier && (!later || earlier.until.getTime() > later.until.getTime())) entries.set(duplicate.key, earlier);
  }
  const first = duplicates[0]!;
  const at = `at ${first.first.line}:${first.first.column} and ${first.second.line}:${first.second.column}`;
  const more = duplicates.length > 1 ? ` (and ${duplicates.length - 1} more key${duplicates.length > 2 ? "s" : ""} given twice)` : "";
  const what = isRow(first)
    ? `${file}: the entry "${first.key}" has two rows, ${at}; the longer rest is used${more}`
    : `${file}: the key "${first.key}" is given twice (${first.pointer}), ${at}; the last one is used${more}`;
  return { ...none, fault: "doubled", what, problem: `${what}, and the next write keeps one` };
}

function toCooldown(value: unknown): Cooldown | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const row = value as Record<string, unknown>;
  const until = new Date(String(row.until));
  if (Number.isNaN(until.getTime())) return undefined;
  const since = row.since ? new Date(String(row.since)) : undefined;
  return {
    until,
    since: since && !Number.isNaN(since.getTime()) ? since : undefined,
    source: row.source === "native" || row.source === "manual" ? row.source : "inferred",
    kind: typeof row.kind === "string" ? row.kind : undefined,
    text: typeof row.text === "string" ? row.text : undefined,
    ...(typeof row.model === "string" && row.model ? { model: row.model } : {}),
  };
}

// The key of a rest of one model of an entry.
export function modelKey(entry: string, model: string): string {
  return `${entry}@${model}`;
}

// The models of an entry that rest at this moment.
export function restingModels(table: CooldownTable, entry: string, now: Date): { model: string; until: Date }[] {
  const rows: { model: string; until: Date }[] = [];
  for (const [key, row] of table.entries) {
    if (row.model && key === modelKey(entry, row.model) && row.until.getTime() > now.getTime()) rows.push({ model: row.model, until: row.until });
  }
  return rows;
}
