import { readConfigFile, writeConfigFile } from "./config-file.js";

// /agent: edits the priority list in config.json — move an entry up, down or first, add or remove one — and
// writes the file atomically, keeping every other setting, unknown keys and the order of keys as they were.
export type OrderChange = "up" | "down" | "first" | "add" | "remove";

export function changeOrder(file: string, change: OrderChange, key: string): string {
  const found = readConfigFile(file);
  if ("problem" in found) return found.problem;
  const config = found.config;
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
  return writeConfigFile(found, "providers", providers, true) ?? `providers: ${providers.map(keyOf).join(", ")}`;
}
