import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { UuldanaError } from "../base/errors.js";
import type { ManifestRecord } from "./types.js";

// What a provider's classify hook says of text the agent drew: a stop the general reader did not see, with what it
// knows of the limit. It may add a stop; the general rules against quotes, code and questions still hold.
export interface ProviderVerdict {
  stop: boolean;
  kind?: string;
  reset_at?: string;
  reason?: string;
}

// One turn of the conversation as an adapter reads it from its agent's screen.
export interface Turn {
  role: "user" | "agent";
  text: string;
}

// A provider adapter: a plain object of optional, synchronous hooks, called on the output path.
export interface ProviderAdapter {
  // a line or lines the agent drew, as one string: a stop for wording the general reader does not know
  classify?(text: string): ProviderVerdict | undefined;
  // true when the line is the agent's own interface (banner, footer, hint, input box, status line)
  chrome?(line: string): boolean;
  // true while the screen shows that the agent is working
  busy?(screen: readonly string[]): boolean;
  // the agent's turns, where the general reading of its screen is wrong for it
  conversation?(screenText: string): Turn[] | undefined;
  // true when a typed prompt may be pasted
  ready?(screen: readonly string[]): boolean;
}

// The hooks an adapter may export, by name.
export const HOOK_NAMES = ["classify", "chrome", "busy", "conversation", "ready"] as const satisfies readonly (keyof ProviderAdapter)[];

// Identity helper that gives an adapter module its type.
export function defineProvider<T extends ProviderAdapter>(adapter: T): T {
  return adapter;
}

// Imports a provider's adapter; called only when that provider runs, never to list or validate.
export async function loadAdapter(record: ManifestRecord): Promise<ProviderAdapter | undefined> {
  const relative = record.manifest?.adapter;
  if (!relative) return undefined;
  const file = resolve(dirname(record.file), relative);
  const details = [`  adapter: ${file}`, `  manifest: ${record.file}`];
  const fail = (problem: string): UuldanaError =>
    new UuldanaError("E_ADAPTER_INVALID", `the adapter of provider "${record.manifest!.id}" ${problem}`, {
      details,
      hint: "an adapter's default export is a plain object whose values are functions (use defineProvider)",
      exitCode: 1,
    });
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (error) {
    // what import() said (a syntax error, a module it imports that is missing) is the cause, printed below
    throw new UuldanaError("E_ADAPTER_UNLOADABLE", `the adapter of provider "${record.manifest!.id}" could not be loaded`, {
      details,
      hint: 'fix what the cause says in the adapter file, or remove "adapter" from the manifest',
      exitCode: 1,
      cause: error,
    });
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
