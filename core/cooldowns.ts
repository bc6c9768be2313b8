import { readFile } from "node:fs/promises";
import { join } from "node:path";

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
