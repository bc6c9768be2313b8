import { watch, type FSWatcher } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";

import { FileProblem, readRegularFile, removeLeftovers } from "../base/files.js";
import { findDuplicateKeys, jsonText, JsonTooDeep, type DuplicateKey } from "../base/json.js";
import { clearsJson, mergeLaterEnd, mergeRest, modelKey, rowJson, toClears, toCooldown, type Clears, type Cooldown, type MergeRule } from "./cooldown-rows.js";
import { acquireLock } from "./lock.js";
import { isPendingName, readPending, removePending, savePending, setAside, type PendingFound } from "./pending-rests.js";

export { ALL_ENTRIES, accountOfKey, modelKey, type Clears, type Cooldown } from "./cooldown-rows.js";

export interface CooldownTable {
  file: string;
  entries: Map<string, Cooldown>;
  // when rests were last cleared by hand (cooldown-rows.ts): a rest seen before is void
  clears: Clears;
  problem: string | undefined;
  // what the problem means: not a file (left alone, never written), damaged (kept aside at the next write), or a
  // row given twice (the longer rest is used; the next write keeps one)
  fault?: "not-a-file" | "damaged" | "doubled" | undefined;
  // the fault alone, without what follows from it; and how to fix it, when the user has to
  what?: string;
  fix?: string | undefined;
}

// What became of a change: written to the table, or not (a rest is then saved beside it, when it could be).
export interface CooldownWrite {
  written: boolean;
  // something to tell the user, once: why it is not written yet, or what was wrong with the table
  notice: string | undefined;
  // the file beside the table a rest that could not be written was saved in
  saved?: string | undefined;
}

export interface UpdateOptions {
  // how long to wait for another writer's lock (1 s by default)
  waitMs?: number;
}

export type CooldownChange = (entries: Map<string, Cooldown>, clears: Clears) => void;

const LOCK_WAIT_MS = 1000;
const TABLE = "cooldowns.json";

// Reads the cooldown table; a missing file is empty, a bad one is reported and treated as empty. The rests saved
// beside it (pending-rests.ts) count as if they were in it, by the table's rule; so do those this process could
// save nowhere. The saved rests are read first: one a writer merges meanwhile is in the table read after it.
export async function readCooldowns(dataDir: string): Promise<CooldownTable> {
  const file = join(dataDir, TABLE);
  const pending = await readPending(dataDir);
  const table = await readTable(file);
  mergeSaved(table, pending, [...(unsaved.get(file) ?? [])]);
  return table;
}

// Calls onChange whenever the cooldown table in the data dir is replaced or changed, or a rest is saved beside it
// (by this uuldana, another one, or "cooldowns clear"): its folder is watched through the operating system, for those
// names. Returns the closer; a folder that cannot be watched is not watched.
export function watchCooldowns(dataDir: string, onChange: () => void): () => void {
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dataDir, (_event, name) => {
      if (name === null || String(name) === TABLE || isPendingName(String(name))) onChange();
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

// Records rests (by key) in the table. Under its lock (see lock.ts and writeTable) when the lock comes within waitMs;
// otherwise each is saved at once as a file of its own beside the table, which every reader counts and the next
// writer merges: a failover never waits longer, and no rest is lost when this process ends. Only when the data dir
// cannot take even that file does a rest stay in this process (tried again at its next write and before it exits).
export async function recordRests(
  dataDir: string,
  rests: ReadonlyMap<string, Cooldown>,
  now: Date = new Date(),
  options: UpdateOptions = {},
): Promise<CooldownWrite> {
  const file = join(dataDir, TABLE);
  return inTurn(file, async () => {
    const all = new Map([...(unsaved.get(file) ?? []), ...rests]);
    const outcome = await writeTable(file, (entries, clears) => addRests(entries, clears, all, now), now, options.waitMs ?? LOCK_WAIT_MS);
    if (outcome.written) {
      unsaved.delete(file);
      return outcome;
    }
    try {
      const saved = await savePending(dataDir, all, now);
      unsaved.delete(file);
      return { written: false, notice: `${outcome.notice}; the rest is saved in a file of its own beside the table, and the next write adds it`, saved };
    } catch (error) {
      unsaved.set(file, all);
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      return { written: false, notice: `${outcome.notice}; nor could the rest be saved beside the table (${code}): it counts in this process only` };
    }
  });
}

// Records rests heard from the shared store (shared-rests.ts) by its rule, the later end wins: only those that end
// later than the table's rows of their keys, looked at again in this process's turn for the table (another session of
// this process may have written them meanwhile), and no write at all when none does. A rest that cannot be written
// now is saved beside the table. Returns the rests it wrote.
export async function recordLater(dataDir: string, rests: ReadonlyMap<string, Cooldown>, now: Date = new Date()): Promise<Map<string, Cooldown>> {
  const file = join(dataDir, TABLE);
  return inTurn(file, async () => {
    const table = await readCooldowns(dataDir);
    // by the rule the write applies: a rest the user cleared since it began is no change either
    const entries = new Map(table.entries);
    const later = new Map([...rests].filter(([key, row]) => mergeLaterEnd(entries, table.clears, key, row, now)));
    if (later.size === 0) return later;
    const outcome = await writeTable(file, (entries, clears) => addRests(entries, clears, later, now, "later-end"), now, LOCK_WAIT_MS);
    if (!outcome.written) await savePending(dataDir, later, now).catch(() => undefined);
    return later;
  });
}

// Changes the table under its lock, as writeTable does. Waits for another writer at most waitMs; a change that could
// not be written then is not kept (cooldowns clear says so and the user tries again).
export async function updateCooldowns(
  dataDir: string,
  change: CooldownChange,
  now: Date = new Date(),
  options: UpdateOptions = {},
): Promise<CooldownWrite> {
  const file = join(dataDir, TABLE);
  return inTurn(file, () => writeTable(file, change, now, options.waitMs ?? LOCK_WAIT_MS));
}

// The last chance for rests this process could save nowhere (its data dir could take no file), called by the CLI once
// its command is done: one more try each, and for what still cannot be written, a notice to print.
export async function writePendingCooldowns(): Promise<string[]> {
  const notices: string[] = [];
  for (const [file, rests] of [...unsaved]) {
    unsaved.delete(file);
    const write = await recordRests(dirname(file), rests, new Date());
    if (!write.written && !write.saved) {
      unsaved.delete(file);
      const what = rests.size === 1 ? "a rest" : `${rests.size} rests`;
      notices.push(`${what} could not be written to the cooldown table before exit: ${write.notice}`);
    }
  }
  return notices;
}

// --- internal ---

// rests this process could neither write nor save beside the table, by table file
const unsaved = new Map<string, Map<string, Cooldown>>();
// one write at a time per table in this process
const turns = new Map<string, Promise<unknown>>();

function inTurn<T>(file: string, work: () => Promise<T>): Promise<T> {
  const next = (turns.get(file) ?? Promise.resolve()).then(work, work);
  turns.set(file, next.catch(() => undefined));
  return next;
}

function addRests(entries: Map<string, Cooldown>, clears: Clears, rests: ReadonlyMap<string, Cooldown>, seen: Date, rule: MergeRule = "seen-later"): void {
  const merge = rule === "later-end" ? mergeLaterEnd : mergeRest;
  for (const [key, row] of rests) merge(entries, clears, key, row, seen);
}

// The rests saved beside the table, and those this process could save nowhere, merged into what was read.
function mergeSaved(table: CooldownTable, pending: PendingFound, own: [string, Cooldown][]): void {
  for (const saved of pending.found) addRests(table.entries, table.clears, saved.rests, saved.made);
  for (const [key, row] of own) mergeRest(table.entries, table.clears, key, row, new Date());
}

// Changes the table under its lock: re-reads it and the rests saved beside it, merges those, applies the change,
// drops expired rows, writes the new table inside the lock folder and renames it over the old one once the lock is
// still ours; then removes the saved rests it merged.
async function writeTable(file: string, change: CooldownChange, now: Date, waitMs: number): Promise<CooldownWrite> {
  const dataDir = dirname(file);
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const attempt = await acquireLock(`${file}.lock`, { waitMs });
    if (!attempt.held) return { written: false, notice: `cannot write ${file} now: ${attempt.reason}` };
    const { lock } = attempt;
    try {
      // what writers killed mid-write left: earlier temporary files and lock folders of processes that are gone
      removeLeftovers(dataDir, TABLE);
      removeLeftovers(dataDir, `${TABLE}.lock`);
      const pending = await readPending(dataDir);
      const table = await readTable(file);
      if (table.fault === "not-a-file") return { written: false, notice: `${table.what}; it cannot be written: ${table.fix}` };
      const notices = table.fault === "doubled" ? [`${table.what}; the table now has one`] : [];
      if (table.fault === "damaged") {
        const aside = `${file}.bad-${now.toISOString().replace(/[:.]/g, "-")}`;
        await rename(file, aside);
        notices.push(`${table.problem}; it was kept as ${aside}`);
      }
      for (const bad of pending.bad) notices.push(`${bad.file} ${bad.reason}; it was kept as ${await setAside(bad.file)}`);
      mergeSaved(table, pending, []);
      change(table.entries, table.clears);
      const temp = join(lock.path, `${TABLE}.tmp`);
      await writeFile(temp, serialize(table, now), { mode: 0o600 });
      if (!(await lock.isOurs())) return { written: false, notice: `cannot write ${file} now: its lock was taken over` };
      // the temporary file lives in the lock folder: had the lock been moved away since, this rename finds nothing
      await rename(temp, file);
      await removePending(pending.found.map((saved) => saved.file));
      return { written: true, notice: notices.length ? notices.join("; ") : undefined };
    } finally {
      await lock.release().catch(() => undefined);
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return { written: false, notice: `cannot write ${file} now (${code})` };
  }
}

function serialize(table: CooldownTable, now: Date): string {
  const rows: Record<string, unknown> = {};
  for (const [key, row] of table.entries) if (row.until.getTime() > now.getTime()) rows[key] = rowJson(row);
  const clears = clearsJson(table.clears, now);
  return jsonText({ version: 1, entries: rows, ...(clears ? { clears } : {}) }, 2) + "\n";
}

// The table as stored, and what is wrong with it (what: the fault itself, without what follows from it).
async function readTable(file: string): Promise<CooldownTable> {
  const entries = new Map<string, Cooldown>();
  const clears: Clears = new Map();
  const none = { file, entries, clears, problem: undefined, fault: undefined, fix: undefined };
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
  for (const [key, at] of toClears((data as { clears?: unknown }).clears)) clears.set(key, at);
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

// The models of an entry that rest at this moment.
export function restingModels(table: CooldownTable, entry: string, now: Date): { model: string; until: Date }[] {
  const rows: { model: string; until: Date }[] = [];
  for (const [key, row] of table.entries) {
    if (row.model && key === modelKey(entry, row.model) && row.until.getTime() > now.getTime()) rows.push({ model: row.model, until: row.until });
  }
  return rows;
}
