import type { Manifest } from "../registry/types.js";

// Switching model inside the same agent at a limit of one model: which model ran out, which to switch to, and
// whether the agent's screen shows the new one. Pure: the run does the typing and the waiting.

// The model a limit message names, by the manifest's names (the longest that fits, so "gemini-2.5-pro" wins over
// "pro"), or the model the agent runs on (the run's flag, or the model it switched to) when the message names none
// or names the family it belongs to ("all Pro models" while on gemini-2.5-pro); undefined when neither is known.
export function exhaustedModel(text: string, manifest: Manifest, current: string | undefined): string | undefined {
  const names = [...(manifest.models?.names ?? []), ...(manifest.models?.switch_to ?? [])].sort((a, b) => b.length - a.length);
  const named = names.find((name) => mentions(text, name));
  if (named === undefined || (current !== undefined && belongsTo(current, named))) return current ?? named;
  return named;
}

// The model the arguments start the CLI on, by the manifest's model flag.
export function modelOf(args: readonly string[], manifest: Manifest): string | undefined {
  return startedWith(args, manifest.models?.flag);
}

// The model to switch to: the first of the manifest's choices that is not the one that ran out and does not rest.
export function switchTarget(manifest: Manifest, exhausted: string, resting: ReadonlySet<string>): string | undefined {
  const choices = manifest.models?.switch_to ?? manifest.models?.names ?? [];
  return choices.find((model) => !sameModel(model, exhausted) && !resting.has(model));
}

// The run's arguments with the model flag pointed away from resting models: the first model to switch to that does
// not rest replaces a resting one the arguments chose, or is added when they chose none and one of the entry's
// models rests (the CLI's own default may be that one). Unchanged when nothing rests or nothing else is left.
export function avoidResting(args: readonly string[], manifest: Manifest, resting: ReadonlySet<string>): { args: string[]; model: string | undefined } {
  const flag = manifest.models?.flag;
  if (!flag || resting.size === 0) return { args: [...args], model: undefined };
  const chosen = startedWith(args, flag);
  if (chosen !== undefined && !resting.has(chosen)) return { args: [...args], model: undefined };
  const other = switchTarget(manifest, chosen ?? "", resting);
  if (!other) return { args: [...args], model: undefined };
  if (chosen === undefined) return { args: [...args, flag, other], model: other };
  const out = [...args];
  const at = out.findIndex((arg) => arg === flag || arg.startsWith(`${flag}=`));
  if (out[at] === flag) out[at + 1] = other;
  else out[at] = `${flag}=${other}`;
  return { args: out, model: other };
}

// Whether a text names a model: its name as a word of its own, in any case ("Opus" for opus, "gemini-2.5-flash").
export function mentions(text: string, model: string): boolean {
  const escaped = model.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(?<![\\p{L}\\p{N}.-])${escaped}(?![\\p{L}\\p{N}]|[.-][\\p{L}\\p{N}])`, "iu").test(text);
}

// --- internal ---

// Whether a model's name has a family's name as one of its parts ("gemini-2.5-pro" is a Pro model, "claude-opus-4"
// an Opus one).
function belongsTo(model: string, family: string): boolean {
  return sameModel(model, family) || model.toLowerCase().split(/[-_.\s/]+/).includes(family.toLowerCase());
}

function sameModel(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

// The model the arguments pick with the flag ("--model x" or "--model=x").
function startedWith(args: readonly string[], flag: string | undefined): string | undefined {
  if (!flag) return undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === flag && args[i + 1] !== undefined) return args[i + 1];
    if (args[i]!.startsWith(`${flag}=`)) return args[i]!.slice(flag.length + 1);
  }
  return undefined;
}
