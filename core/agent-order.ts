import { readFileSync, renameSync, writeFileSync } from "node:fs";

// /agent: edits the priority list in config.json — move an entry up, down or first, add or remove one — and
// writes the file atomically, keeping every other setting, unknown keys and the order of keys as they were.
export type OrderChange = "up" | "down" | "first" | "add" | "remove";

export function changeOrder(file: string, change: OrderChange, key: string): string {
  let config: Record<string, unknown> = {};
  try {
    config = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") return `cannot change ${file}: ${(error as Error).message}`;
  }
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
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, JSON.stringify(updated, null, 2) + "\n", { mode: 0o600 });
  renameSync(temp, file);
  return `providers: ${providers.map(keyOf).join(", ")}`;
}
