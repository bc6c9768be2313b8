// The test helper for provider pack authors (import from "uuldana/testing", uuldana a development dependency): a
// manifest and its adapter opened as a session opens them, to check limit wording and hooks against captured lines.
import { resolve } from "node:path";

import { formatError } from "./base/errors.js";
import { compilePhrase } from "./reader/phrases.js";
import { classifyText, type Verdict } from "./reader/reader.js";
import { loadManifestFile } from "./registry/manifest.js";
import { formatHookProblem, openProvider, type ProviderHooks } from "./registry/provider.js";
import { loadBuiltInManifests } from "./registry/registry.js";
import type { Manifest } from "./registry/types.js";

export { readScreen } from "./registry/captured-screen.js";
export type { ProviderHooks } from "./registry/provider.js";
export type { LimitKind, Verdict } from "./reader/reader.js";

// What a verdict is read with: the clock (default now) and the time zone a printed reset is read in (default UTC).
export interface ExplainOptions {
  now?: Date | string;
  timeZone?: string;
}

// A provider opened for tests.
export interface TestProvider {
  manifest: Manifest;
  // the verdict a session reaches on text the agent drew: the general reader, the manifest's limit_phrases and model
  // names, and the adapter's classify hook together — what `uuldana explain --provider <id>` says, plus the adapter
  explain(text: string, options?: ExplainOptions): Verdict;
  // the hooks as a session calls them: the manifest's patterns together with the adapter's hooks, each call timed, a
  // hook that throws, answers the wrong shape or is too slow turned off
  hooks: ProviderHooks;
  // the lines a session leaves out of the next agent's prompt as this agent's own interface
  chrome(lines: readonly string[]): string[];
  // one line per hook turned off so far, as a session would show it; a pack's tests expect it to stay empty
  problems: string[];
}

// How the hooks are timed: a session's budget per call (50 ms) unless a slower test machine needs more.
export interface LoadOptions {
  budgetMs?: number;
}

// Opens a manifest file and its adapter. An invalid manifest, or an adapter that will not load, throws an Error whose
// message is what uuldana would print: the file, the JSON pointer of each problem and the fix.
export async function loadProvider(manifestFile: string, options: LoadOptions = {}): Promise<TestProvider> {
  const record = await loadManifestFile(resolve(manifestFile), "drop-in");
  if (!record.manifest) throw new Error(formatError(record.error).trimEnd());
  const manifest = record.manifest;
  const problems: string[] = [];
  let hooks: ProviderHooks;
  try {
    hooks = await openProvider(record, { report: (problem) => problems.push(formatHookProblem(problem)), ...(options.budgetMs !== undefined ? { budgetMs: options.budgetMs } : {}) });
  } catch (error) {
    throw new Error(formatError(error).trimEnd());
  }
  const phrases = (manifest.limit_phrases ?? []).map(compilePhrase);
  const builtIn = (await loadBuiltInManifests()).flatMap((known) => known.models?.names ?? []);
  const models = [...new Set([...builtIn, ...(manifest.models?.names ?? [])])];
  return {
    manifest,
    explain: (text, options = {}) =>
      classifyText(text, {
        now: options.now === undefined ? new Date() : new Date(options.now),
        timeZone: options.timeZone ?? "UTC",
        phrases,
        models,
        provider: hooks.classify,
      }),
    hooks,
    chrome: (lines) => lines.filter((line) => hooks.chrome(line)),
    problems,
  };
}
