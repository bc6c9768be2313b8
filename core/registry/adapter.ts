import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { UuldanaError } from "../base/errors.js";
import type { ManifestRecord } from "./types.js";

// A provider adapter: a plain object of optional hooks. Later versions add hooks; every hook is optional.
export type ProviderAdapter = Readonly<Record<string, (...args: never[]) => unknown>>;

// Identity helper that gives an adapter module its type.
export function defineProvider<T extends ProviderAdapter>(adapter: T): T {
  return adapter;
}

// Imports a provider's adapter; called only when that provider runs, never to list or validate.
export async function loadAdapter(record: ManifestRecord): Promise<ProviderAdapter | undefined> {
  const relative = record.manifest?.adapter;
  if (!relative) return undefined;
  const file = resolve(dirname(record.file), relative);
  const fail = (problem: string, cause?: unknown): UuldanaError =>
    new UuldanaError("E_MANIFEST_INVALID", `the adapter of provider "${record.manifest!.id}" ${problem}`, {
      details: [`  adapter: ${file}`, `  manifest: ${record.file}`],
      hint: "an adapter's default export is a plain object whose values are functions (use defineProvider)",
      exitCode: 1,
      cause,
    });
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (error) {
    throw fail(`could not be loaded (${(error as Error).message})`, error);
  }
  const adapter = loaded.default;
  if (typeof adapter !== "object" || adapter === null || Array.isArray(adapter)) {
    throw fail("has no default export object");
  }
  for (const [name, hook] of Object.entries(adapter)) {
    if (typeof hook !== "function") throw fail(`exports "${name}", which is not a function`);
  }
  return adapter as ProviderAdapter;
}
