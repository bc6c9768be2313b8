import { readFileSync } from "node:fs";
import { delimiter, join } from "node:path";

import type { Env } from "../base/paths.js";
import { readConfigFile, writeConfigFile } from "../config/config-file.js";
import { PathLookup } from "./detect.js";
import { loadRegistry } from "./registry.js";

// What a pack means for the user's entries: an added pack's agents that are not on PATH yet, and the entries of
// config.json that name a provider only a removed pack brought.

// One provider of an added pack whose executable is not on PATH: what to look for, and the folder of the config
// dir's node_modules/.bin when the pack installed it there.
export interface MissingAgent {
  id: string;
  executables: string[];
  packBin: string | undefined;
}

// The providers of a just-added pack whose executables PATH does not hold.
export async function missingAgents(providers: readonly { id: string; file: string }[], configDir: string, env: Env): Promise<MissingAgent[]> {
  const lookup = new PathLookup(env, process.platform);
  const packBin = join(configDir, "node_modules", ".bin");
  const inPackBin = new PathLookup({ PATH: packBin }, process.platform);
  const missing: MissingAgent[] = [];
  for (const provider of providers) {
    const executables = executablesOf(provider.file);
    if (executables.length === 0 || (await lookup.find(executables)).path) continue;
    const onPackBin = (await inPackBin.find(executables)).path !== undefined && !(env.PATH ?? "").split(delimiter).includes(packBin);
    missing.push({ id: provider.id, executables, packBin: onPackBin ? packBin : undefined });
  }
  return missing;
}

// One entry of config.json's providers list, by its key and the provider it names.
export interface NamedEntry {
  key: string;
  id: string;
}

// The entries of config.json's providers that name one of these provider ids, and no manifest provides any longer.
export async function orphanedEntries(configFile: string, ids: readonly string[], registry: { configDir: string; packs: readonly string[]; env: Env }): Promise<NamedEntry[]> {
  if (ids.length === 0) return [];
  const known = (await loadRegistry(registry)).providers;
  const gone = new Set(ids.filter((id) => !known.has(id)));
  return entriesOf(configFile).filter((entry) => gone.has(entry.id));
}

// Takes these entries out of config.json's providers; returns a message when the file could not be written.
export function pruneEntries(configFile: string, entries: readonly NamedEntry[]): string | undefined {
  const found = readConfigFile(configFile);
  if ("problem" in found) return found.problem;
  const keys = new Set(entries.map((entry) => entry.key));
  const list = Array.isArray(found.config.providers) ? (found.config.providers as unknown[]) : [];
  return writeConfigFile(found, "providers", list.filter((item) => !keys.has(toEntry(item)?.key ?? "")));
}

// The provider ids in a pack's manifest files, as each file declares it.
export function providerIds(files: readonly string[]): string[] {
  return files.map((file) => readJson(file)?.id).filter((id): id is string => typeof id === "string");
}

// --- internal ---

function executablesOf(file: string): string[] {
  const executables = readJson(file)?.executables;
  return Array.isArray(executables) ? executables.filter((name): name is string => typeof name === "string") : [];
}

function entriesOf(configFile: string): NamedEntry[] {
  const found = readConfigFile(configFile);
  if ("problem" in found || !Array.isArray(found.config.providers)) return [];
  return (found.config.providers as unknown[]).map(toEntry).filter((entry): entry is NamedEntry => entry !== undefined);
}

// "codex" or {"id": "codex", "name": "codex-work"}: its key is its name, else its id
function toEntry(item: unknown): NamedEntry | undefined {
  if (typeof item === "string") return { key: item, id: item };
  if (typeof item !== "object" || item === null) return undefined;
  const { id, name } = item as { id?: unknown; name?: unknown };
  if (typeof id !== "string") return undefined;
  return { key: typeof name === "string" ? name : id, id };
}

function readJson(file: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(readFileSync(file, "utf8")) as unknown;
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
