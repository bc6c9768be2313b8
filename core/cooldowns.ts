import { mkdir, readFile, rename, rmdir, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";

import { sleep } from "./time.js";

// One resting entry, as stored in cooldowns.json.
export interface Cooldown {
  until: Date;
  since: Date | undefined;
  source: "inferred" | "native" | "manual";
  kind: string | undefined;
  text: string | undefined;
}

export interface CooldownTable {
  file: string;
  entries: Map<string, Cooldown>;
  problem: string | undefined;
}

const LOCK_STALE_MS = 10_000;
const LOCK_WAIT_MS = 5_000;

// Reads the cooldown table; a missing file is empty, an unreadable one is reported and treated as empty.
export async function readCooldowns(dataDir: string): Promise<CooldownTable> {
  const file = join(dataDir, "cooldowns.json");
  const entries = new Map<string, Cooldown>();
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { file, entries, problem: code === "ENOENT" ? undefined : `cannot read ${file} (${code ?? String(error)})` };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { file, entries, problem: `${file} is not valid JSON; no entry is treated as resting` };
  }
  const rows = (data as { entries?: unknown } | null)?.entries;
  if (typeof rows !== "object" || rows === null) {
    return { file, entries, problem: `${file} has no "entries" object; no entry is treated as resting` };
  }
  for (const [key, row] of Object.entries(rows as Record<string, Record<string, unknown>>)) {
    const until = new Date(String(row?.until));
    if (Number.isNaN(until.getTime())) continue;
    const since = row.since ? new Date(String(row.since)) : undefined;
    entries.set(key, {
      until,
      since: since && !Number.isNaN(since.getTime()) ? since : undefined,
      source: row.source === "native" || row.source === "manual" ? row.source : "inferred",
      kind: typeof row.kind === "string" ? row.kind : undefined,
      text: typeof row.text === "string" ? row.text : undefined,
    });
  }
  return { file, entries, problem: undefined };
}

// When an entry stops resting, or undefined when it is not resting at this moment.
export function restingUntil(table: CooldownTable, key: string, now: Date): Date | undefined {
  const row = table.entries.get(key);
  return row && row.until.getTime() > now.getTime() ? row.until : undefined;
}

// Changes the table under a lock: re-reads it, applies the change, drops expired rows, writes a temporary file
// and renames it over the table, so a crash or another uuldana never leaves a torn or lost row. An unreadable
// table is kept aside as cooldowns.json.bad-<time> and reported. Returns what was reported, if anything.
export async function updateCooldowns(
  dataDir: string,
  change: (entries: Map<string, Cooldown>) => void,
  now: Date = new Date(),
): Promise<string | undefined> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, "cooldowns.json");
  const release = await lock(`${file}.lock`);
  try {
    const table = await readCooldowns(dataDir);
    let problem: string | undefined;
    if (table.problem && !table.problem.startsWith("cannot read")) {
      const aside = `${file}.bad-${now.toISOString().replace(/[:.]/g, "-")}`;
      await rename(file, aside);
      problem = `${table.problem}; it was kept as ${aside}`;
    }
    change(table.entries);
    const rows: Record<string, unknown> = {};
    for (const [key, row] of table.entries) {
      if (row.until.getTime() <= now.getTime()) continue;
      rows[key] = {
        until: row.until.toISOString(),
        since: row.since?.toISOString() ?? null,
        source: row.source,
        kind: row.kind ?? null,
        text: row.text ?? null,
      };
    }
    const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(temp, JSON.stringify({ version: 1, entries: rows }, null, 2) + "\n", { mode: 0o600 });
    await rename(temp, file);
    return problem;
  } finally {
    await release();
  }
}

// --- internal ---

// A lock that works across processes: creating a folder is atomic. A lock older than LOCK_STALE_MS is left from a
// process that died, and is taken over.
async function lock(path: string): Promise<() => Promise<void>> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await mkdir(path, { mode: 0o700 });
      return async () => {
        await rmdir(path).catch(() => undefined);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const age = await stat(path).then((info) => Date.now() - info.mtimeMs, () => 0);
      if (age > LOCK_STALE_MS || Date.now() > deadline) {
        await rmdir(path).catch(() => undefined);
        continue;
      }
      await sleep(10 + Math.random() * 20);
    }
  }
}
