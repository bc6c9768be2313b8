// The rows of the cooldown table as they are stored, and the one rule by which a rest joins the table, wherever it
// comes from: the writer holding the lock, a rest saved beside the table (pending-rests.ts), or a reader's view.

// One resting entry, as stored in cooldowns.json.
export interface Cooldown {
  until: Date;
  since: Date | undefined;
  source: "inferred" | "native" | "manual";
  kind: string | undefined;
  text: string | undefined;
  // a rest of one model only (the row keyed "<account>@<model>"): the entry runs, on another model
  model?: string | undefined;
  // the machine whose uuldana wrote it, for a rest that came from the shared store (shared-rests.ts)
  machine?: string | undefined;
}

// How a rest joins rows that may hold one for its key already: "seen-later" (the table's own rule, mergeRest), or
// "later-end" (the shared store's: of two rests of one key, the one that ends later counts).
export type MergeRule = "seen-later" | "later-end";

// When rests were last cleared by hand, by key; ALL_ENTRIES is "cooldowns clear" with no entry.
export type Clears = Map<string, Date>;

export const ALL_ENTRIES = "*";

// How long a clear is remembered: longer than any usage window (monthly ones included), so a rest seen before the
// clear and saved beside the table late (by a uuldana that was stopped meanwhile) cannot come back while it lasts.
export const CLEAR_KEPT_MS = 35 * 24 * 3_600_000;

// Adds a rest to the table's rows, or leaves it out, by the table's rule:
// - a rest seen before the last clear of its entry (or of every entry) is void: a clear is never undone by a rest
//   that was seen earlier and written later;
// - of two rests of one key, the one seen later counts, as a later write always did (a newer reading of the same
//   account says more than an older one); of two seen at the same moment, the longer;
// - a rest without a time it was seen (an older table's row) counts as seen at `seen`.
// True when the rest was taken.
export function mergeRest(entries: Map<string, Cooldown>, clears: Clears, key: string, row: Cooldown, seen: Date): boolean {
  const at = (row.since ?? seen).getTime();
  const cleared = clearedAt(clears, key, row);
  if (cleared !== undefined && at <= cleared) return false;
  const held = entries.get(key);
  if (held?.since) {
    const heldAt = held.since.getTime();
    if (at < heldAt || (at === heldAt && row.until.getTime() <= held.until.getTime())) return false;
  }
  entries.set(key, row);
  return true;
}

// Adds a rest by the shared store's rule: void when seen before the last clear that covers it, as in mergeRest; else
// taken when no rest of its key ends as late. True when the rest was taken.
export function mergeLaterEnd(entries: Map<string, Cooldown>, clears: Clears, key: string, row: Cooldown, seen: Date): boolean {
  const cleared = clearedAt(clears, key, row);
  if (cleared !== undefined && (row.since ?? seen).getTime() <= cleared) return false;
  const held = entries.get(key);
  if (held && held.until.getTime() >= row.until.getTime()) return false;
  entries.set(key, row);
  return true;
}

// The row as JSON, for the table and for a rest saved beside it.
export function rowJson(row: Cooldown): Record<string, unknown> {
  return {
    until: row.until.toISOString(),
    since: row.since?.toISOString() ?? null,
    source: row.source,
    kind: row.kind ?? null,
    text: row.text ?? null,
    ...(row.model ? { model: row.model } : {}),
    ...(row.machine ? { machine: row.machine } : {}),
  };
}

// A row read back; undefined when it is not one (no valid "until").
export function toCooldown(value: unknown): Cooldown | undefined {
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
    ...(typeof row.machine === "string" && row.machine ? { machine: row.machine } : {}),
  };
}

// The clears as JSON: those still remembered at `now`, none when every entry was cleared later.
export function clearsJson(clears: Clears, now: Date): Record<string, string> | undefined {
  const all = clears.get(ALL_ENTRIES)?.getTime();
  const kept = [...clears].filter(([key, at]) => at.getTime() > now.getTime() - CLEAR_KEPT_MS && (key === ALL_ENTRIES || all === undefined || at.getTime() > all));
  return kept.length ? Object.fromEntries(kept.map(([key, at]) => [key, at.toISOString()])) : undefined;
}

// The clears read back; what is not a time is left out.
export function toClears(value: unknown): Clears {
  const clears: Clears = new Map();
  if (typeof value !== "object" || value === null) return clears;
  for (const [key, at] of Object.entries(value as Record<string, unknown>)) {
    const time = new Date(String(at));
    if (typeof at === "string" && !Number.isNaN(time.getTime())) clears.set(key, time);
  }
  return clears;
}

// The key of a rest of one model of an entry.
export function modelKey(entry: string, model: string): string {
  return `${entry}@${model}`;
}

// The account a row's key is kept by: the key less the "@model" modelKey gave it.
export function accountOfKey(key: string, model: string | undefined): string {
  return model && key.endsWith(`@${model}`) ? key.slice(0, -model.length - 1) : key;
}

// --- internal ---

// The last clear that covers a rest: of every entry, of its key, or (a model's rest) of its entry.
function clearedAt(clears: Clears, key: string, row: Cooldown): number | undefined {
  const entry = row.model && key.endsWith(`@${row.model}`) ? key.slice(0, -row.model.length - 1) : undefined;
  const times = [clears.get(ALL_ENTRIES), clears.get(key), entry === undefined ? undefined : clears.get(entry)];
  const known = times.filter((time): time is Date => time !== undefined).map((time) => time.getTime());
  return known.length ? Math.max(...known) : undefined;
}
