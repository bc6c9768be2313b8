import { accountOfKey, type Cooldown } from "./cooldown-rows.js";
import type { QuotaWindow } from "./quota-store.js";

// What the shared rest store holds, as uuldana writes it and reads it back: the keys, the values (JSON, small, with
// no secrets: texts are redacted before they are written) and the checks that turn anything else — a value another
// program wrote, a hostile one, one with absurd dates or of another type — into "no rest" with a reason to say.

export const REST_PREFIX = "uuldana:rest:";
export const READING_PREFIX = "uuldana:reading:";
// every change (a rest, a reading) is published here as "<key>\n<value>"
export const CHANNEL = "uuldana:changes";

// no value uuldana writes comes near this; a larger one is not uuldana's
const MAX_VALUE_BYTES = 8192;
// a rest or reading ends within this of now, or it is no rest uuldana wrote (the longest usage window is a month)
const MAX_AHEAD_MS = 400 * 24 * 3_600_000;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const MODEL = /^[^\s\x00-\x1f\x7f]{1,100}$/;
const SOURCES = new Set(["inferred", "native", "manual"]);

// A value read back: the rest (or reading), nothing to say (it is over), or why it is not one.
export type Read<T> = { ok: T } | { over: true } | { bad: string };

export interface SharedReading {
  account: string;
  at: Date;
  source: string;
  windows: QuotaWindow[];
  machine: string;
}

// The furthest end a value may have when written at `now`: the store's own expiry is never set past it.
export function latestEnd(now: number): number {
  return now + MAX_AHEAD_MS;
}

// A rest as the store keeps it, with the machine that wrote it.
export function restValue(row: Cooldown, machine: string): string {
  const value = { v: 1, until: row.until.toISOString(), since: row.since?.toISOString() ?? null, source: row.source, kind: row.kind ?? null, text: row.text ?? null, model: row.model ?? null, machine: row.machine ?? machine };
  return JSON.stringify(value);
}

// A rest read from the store under `key` (the table's key after the prefix), checked field by field.
export function readRest(key: string, value: unknown, now: number): Read<Cooldown> {
  const data = parseValue(value);
  if ("bad" in data) return data;
  const row = data.ok;
  const until = date(row.until);
  if (!until) return { bad: `its "until" is not a time` };
  if (until.getTime() > latestEnd(now)) return { bad: `its "until" is more than 400 days away (${until.toISOString()})` };
  const since = row.since === null ? undefined : date(row.since);
  if (since === null || (since && (since.getTime() > now + 86_400_000 || since.getTime() > until.getTime()))) return { bad: `its "since" is not a time before its "until"` };
  if (typeof row.source !== "string" || !SOURCES.has(row.source)) return { bad: `its "source" is not inferred, native or manual` };
  const kind = optionalText(row.kind, 40);
  const text = optionalText(row.text, 2000);
  const machine = optionalText(row.machine, 255);
  const model = row.model === null ? undefined : typeof row.model === "string" && MODEL.test(row.model) ? row.model : null;
  if (kind === null || text === null || machine === null || model === null) return { bad: "it has a field of the wrong type or size" };
  const account = accountOfKey(key, model);
  if (!NAME.test(account) || (model && key !== `${account}@${model}`)) return { bad: "its key is no account (or account@model) uuldana names" };
  if (until.getTime() <= now) return { over: true };
  return { ok: { until, since, source: row.source as Cooldown["source"], kind, text, ...(model ? { model } : {}), ...(machine ? { machine } : {}) } };
}

// A reading as the store keeps it.
export function readingValue(reading: Omit<SharedReading, "machine">, machine: string): string {
  const windows = reading.windows.map((one) => ({ name: one.name, used_percent: one.usedPercent, resets_at: one.resetsAt?.toISOString() ?? null, window_minutes: one.windowMinutes ?? null }));
  return JSON.stringify({ v: 1, account: reading.account, at: reading.at.toISOString(), source: reading.source, windows, machine });
}

// A reading read from the store under `account`, checked field by field.
export function readReading(account: string, value: unknown, now: number): Read<SharedReading> {
  const data = parseValue(value);
  if ("bad" in data) return data;
  const row = data.ok;
  const at = date(row.at);
  if (!at || at.getTime() > now + 86_400_000) return { bad: `its "at" is not a time before now` };
  const source = optionalText(row.source, 40);
  const machine = optionalText(row.machine, 255);
  if (row.account !== account || !source || !machine || !Array.isArray(row.windows) || row.windows.length > 10) return { bad: "it has a field of the wrong type or size" };
  const windows: QuotaWindow[] = [];
  for (const one of row.windows as Record<string, unknown>[]) {
    const name = optionalText(one?.name, 40);
    const used = one?.used_percent;
    const resetsAt = one?.resets_at === null ? undefined : date(one?.resets_at);
    const minutes = one?.window_minutes;
    if (!name || typeof used !== "number" || !(used >= 0 && used <= 100) || resetsAt === null) return { bad: "a window of it is not a quota window" };
    if (resetsAt && resetsAt.getTime() > latestEnd(now)) return { bad: "a window of it resets more than 400 days away" };
    const windowMinutes = typeof minutes === "number" && minutes > 0 && minutes < 1e6 ? minutes : undefined;
    windows.push({ name, usedPercent: used, ...(resetsAt ? { resetsAt } : {}), ...(windowMinutes ? { windowMinutes } : {}) });
  }
  return { ok: { account, at, source, windows, machine } };
}

// --- internal ---

function parseValue(value: unknown): { ok: Record<string, unknown> } | { bad: string } {
  if (typeof value !== "string") return { bad: "it is not a string value" };
  if (Buffer.byteLength(value) > MAX_VALUE_BYTES) return { bad: `it is larger than ${MAX_VALUE_BYTES} bytes` };
  let data: unknown;
  try {
    data = JSON.parse(value);
  } catch {
    return { bad: "it is not JSON" };
  }
  if (typeof data !== "object" || data === null || Array.isArray(data) || (data as { v?: unknown }).v !== 1) return { bad: "it is not a value uuldana wrote (no version 1)" };
  return { ok: data as Record<string, unknown> };
}

// A time given as an ISO string; undefined when absent, null when it is something else.
function date(value: unknown): Date | undefined | null {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length > 40) return null;
  const time = new Date(value);
  return Number.isNaN(time.getTime()) ? null : time;
}

// A string of at most `max` characters; undefined when absent (null or missing), null when it is something else.
function optionalText(value: unknown, max: number): string | undefined | null {
  if (value === null || value === undefined) return undefined;
  return typeof value === "string" && value.length <= max ? value : null;
}
