import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { readRegularFileSync } from "../base/files.js";
import { jsonText } from "../base/json.js";

// The latest native quota reading of each entry, as the agents themselves report it (a status line, a rollout file):
// one small file per entry in the data dir's quota folder, replaced whole at each reading, so two sessions of the
// same entry never lose each other's writes and a reading is never half written.

// One window of an agent's allowance as the agent reported it.
export interface QuotaWindow {
  // the window's name as the agent gives it ("five_hour", "seven_day", "primary", "secondary")
  name: string;
  usedPercent: number;
  // when the window resets, when the agent says
  resetsAt?: Date | undefined;
  windowMinutes?: number | undefined;
}

// One reading of an entry's quota, with when it was taken and where it came from.
export interface QuotaReading {
  entry: string;
  at: Date;
  // the kind of source, named as the manifest's quota.source ("statusline", "rollout")
  source: string;
  windows: QuotaWindow[];
}

// Writes an entry's latest reading; false when the data dir cannot take it (the reading is then only in memory).
export function recordQuota(dataDir: string, reading: QuotaReading): boolean {
  const folder = join(dataDir, "quota");
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const file = join(folder, fileName(reading.entry));
    const temp = `${file}.${process.pid}.tmp`;
    writeFileSync(temp, jsonText(serialize(reading)) + "\n", { mode: 0o600 });
    renameSync(temp, file);
    return true;
  } catch {
    return false;
  }
}

// The latest reading of one entry, or undefined when there is none or it cannot be read.
export function readQuota(dataDir: string, entry: string): QuotaReading | undefined {
  return parse(join(dataDir, "quota", fileName(entry)), entry);
}

// Every entry's latest reading, by entry.
export function readAllQuota(dataDir: string): Map<string, QuotaReading> {
  const readings = new Map<string, QuotaReading>();
  let names: string[];
  try {
    names = readdirSync(join(dataDir, "quota"));
  } catch {
    return readings;
  }
  for (const name of names.filter((n) => n.endsWith(".json"))) {
    const reading = parse(join(dataDir, "quota", name));
    if (reading) readings.set(reading.entry, reading);
  }
  return readings;
}

// The least share left in any window of a reading, in percent (100 when it has no window).
export function percentLeft(reading: QuotaReading): number {
  return Math.min(100, ...reading.windows.map((window) => Math.max(0, 100 - window.usedPercent)));
}

// --- internal ---

// A file name for an entry key: its safe characters, and a hash that keeps two keys that look alike apart.
function fileName(entry: string): string {
  const safe = entry.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 80);
  return `${safe}-${createHash("sha256").update(entry).digest("hex").slice(0, 12)}.json`;
}

function serialize(reading: QuotaReading): Record<string, unknown> {
  return {
    version: 1,
    entry: reading.entry,
    at: reading.at.toISOString(),
    source: reading.source,
    windows: reading.windows.map((window) => ({
      name: window.name,
      used_percent: window.usedPercent,
      resets_at: window.resetsAt?.toISOString() ?? null,
      window_minutes: window.windowMinutes ?? null,
    })),
  };
}

function parse(file: string, expected?: string): QuotaReading | undefined {
  let value: unknown;
  try {
    value = JSON.parse(readRegularFileSync(file));
  } catch {
    return undefined;
  }
  const record = value as Record<string, unknown> | null;
  if (!record || record.version !== 1 || typeof record.entry !== "string" || (expected !== undefined && record.entry !== expected)) return undefined;
  const at = new Date(String(record.at));
  if (Number.isNaN(at.getTime()) || typeof record.source !== "string" || !Array.isArray(record.windows)) return undefined;
  const windows: QuotaWindow[] = [];
  for (const raw of record.windows as unknown[]) {
    const window = raw as Record<string, unknown> | null;
    if (!window || typeof window.name !== "string" || typeof window.used_percent !== "number" || !Number.isFinite(window.used_percent)) continue;
    const resetsAt = typeof window.resets_at === "string" ? new Date(window.resets_at) : undefined;
    windows.push({
      name: window.name,
      usedPercent: window.used_percent,
      resetsAt: resetsAt && !Number.isNaN(resetsAt.getTime()) ? resetsAt : undefined,
      windowMinutes: typeof window.window_minutes === "number" ? window.window_minutes : undefined,
    });
  }
  return { entry: record.entry, at, source: record.source, windows };
}
