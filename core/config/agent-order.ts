import { realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { FileProblem, readRegularFileSync, removeLeftovers } from "../base/files.js";
import { parseJson } from "../base/json.js";

// /agent: edits the priority list in config.json — move an entry up, down or first, add or remove one — and
// writes the file atomically, keeping every other setting, unknown keys and the order of keys as they were.
export type OrderChange = "up" | "down" | "first" | "add" | "remove";

export function changeOrder(file: string, change: OrderChange, key: string): string {
  let config: Record<string, unknown> = {};
  let target = file;
  try {
    config = parseJson(readRegularFileSync(file), file) as Record<string, unknown>;
    // a config.json that links to the user's own file stays a link: the file it points at is changed
    target = realpathSync(file);
  } catch (error) {
    if (error instanceof FileProblem && !error.missing) return `cannot change ${file}: it ${error.reason}`;
    if (error instanceof UuldanaError) return `cannot change ${error.message}`;
    if (!(error instanceof FileProblem)) return `cannot change ${file}: ${(error as Error).message}`;
  }
  if (typeof config !== "object" || config === null || Array.isArray(config)) return `cannot change ${file}: it does not hold a JSON object`;
  const providers = Array.isArray(config.providers) ? [...(config.providers as unknown[])] : [];
  const keyOf = (item: unknown): string =>
    typeof item === "string" ? item : String((item as { name?: string; id?: string }).name ?? (item as { id?: string }).id);
  const index = providers.findIndex((item) => keyOf(item) === key);
  if (change === "add") {
    if (index !== -1) return `${key} is already in the list`;
    providers.push(key);
  } else {
    if (index === -1) return `${key} is not in your providers list`;
    const [item] = providers.splice(index, 1);
    if (change === "up") providers.splice(Math.max(0, index - 1), 0, item);
    if (change === "down") providers.splice(Math.min(providers.length, index + 1), 0, item);
    if (change === "first") providers.unshift(item);
  }
  const updated = "providers" in config ? { ...config, providers } : { providers, ...config };
  // what a uuldana killed mid-write left beside config.json goes first
  removeLeftovers(dirname(target), basename(target));
  const temp = `${target}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, JSON.stringify(updated, null, 2) + "\n", { mode: 0o600 });
    renameSync(temp, target);
  } catch (error) {
    rmSync(temp, { force: true });
    return `cannot change ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
  }
  return `providers: ${providers.map(keyOf).join(", ")}`;
}
