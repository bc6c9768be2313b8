
import { UuldanaError } from "../base/errors.js";
import { resolveDirs } from "../base/paths.js";
import type { Context } from "../config/context.js";
import { loadRegistry } from "../registry/registry.js";
import { PathLookup, type Detection } from "../registry/detect.js";
import { buildPriorityList } from "../session/eligibility.js";
import { sessionIds } from "../session/sessions.js";
import { completionScript } from "./completion-scripts.js";
import { SHELLS, type CompletionNode, type ListedValues, type Shell } from "./completion-tree.js";
import { result, type CommandResult } from "./result.js";

// A value a shell may be handed as it is: letters, digits and . _ - @ % + , (no blank, no control character, nothing
// a shell expands or splits a word at), not beginning like an option.
const SAFE_VALUE = /^[A-Za-z0-9][A-Za-z0-9._@%+,-]*$/;

// A pack as packs names it may also hold slashes (@scope/name, ../folder) and begin with @ or a dot; ~ is left out,
// since the shell would expand the word it was offered as.
const SAFE_PACK = /^[A-Za-z0-9@.][A-Za-z0-9._@%+,/-]*$/;

// uuldana completion SHELL: the script that completes uuldana's commands, options and values in that shell.
export function printCompletion(shell: Shell | undefined, nodes: readonly CompletionNode[], version: string): CommandResult {
  if (!shell) {
    throw new UuldanaError("E_USAGE", `completion needs the name of your shell: ${SHELLS.slice(0, -1).join(", ")} or ${SHELLS.at(-1)}`, {
      hint: 'for example "uuldana completion bash"; the README\'s "Shell completion" says where the script goes',
    });
  }
  return result(completionScript(shell, nodes, version));
}

// uuldana completion --values KIND, run by the scripts at a Tab press: the entries of the priority list or the
// session ids, one a line. It reads files only (no agent is started, not even for its version) and prints nothing
// at all when they cannot be read: a Tab press shows no error.
export async function listValues(kind: ListedValues, context: () => Promise<Context>): Promise<CommandResult> {
  let values: string[];
  try {
    values = kind === "sessions" ? sessionIds(resolveDirs().data) : kind === "packs" ? (await context()).config.packs : await entryKeys(await context());
  } catch {
    values = [];
  }
  const safe = kind === "packs" ? SAFE_PACK : SAFE_VALUE;
  return result(values.filter((value) => safe.test(value)).map((value) => `${value}\n`).join(""));
}

// --- internal ---

// The keys providers list shows: the config's entries, then (with auto_detect) each provider whose executable is on
// PATH. A provider counts as installed when its executable is found, as it does there; its version is not asked.
async function entryKeys(context: Context): Promise<string[]> {
  const { config, dirs, env } = context;
  if (!config.autoDetect) return config.entries.map((entry) => entry.key);
  const registry = await loadRegistry({ configDir: dirs.config, packs: config.packs, replaces: config.replaces, env }).catch(() => undefined);
  if (!registry) return config.entries.map((entry) => entry.key);
  const providers = new Map([...registry.providers].map(([id, record]) => [id, record.manifest]));
  const found: Detection = { installed: true, path: null, version: null, recognised: false, timedOut: false, problem: undefined, versionFrom: null };
  const lookup = new PathLookup(env, process.platform);
  const installed = await Promise.all([...providers].map(async ([id, manifest]) => ((await lookup.find(manifest.executables)).path ? id : undefined)));
  const detections = new Map(installed.filter((id): id is string => id !== undefined).map((id) => [id, found]));
  return buildPriorityList({ entries: config.entries, autoDetect: true, providers, detections }).map((entry) => entry.key);
}

