import { closestWord } from "../base/suggest.js";
import type { CooldownTable } from "./cooldowns.js";
import { restingModels, restingUntil } from "./cooldowns.js";
import type { Detection } from "../registry/detect.js";
import { LEVELS, pickLevel, type Level } from "../config/levels.js";
import { strayEnvReason, strayFlagReason, strayPermissionEnv, strayPermissionFlag } from "../registry/permission-flags.js";
import { escapeControls } from "../base/safe-text.js";
import { accountOf, type Entry } from "../config/config.js";
import { notSignedInReason, type SignInReading } from "../registry/sign-in.js";
import type { Manifest, PromptMode } from "../registry/types.js";

// One entry of the priority list with everything that decides whether it can run now.
export interface Assessment {
  order: number;
  entry: Entry;
  manifest: Manifest | undefined;
  detection: Detection | undefined;
  level: Level | null;
  // why it has no level to run at: refused by the ceiling, or its own args or env would change the level
  levelReasons: string[];
  prompt: PromptMode;
  restingUntil: Date | undefined;
  // the models of the entry that rest on their own (a per-model limit): it runs, on another model
  restingModels: { model: string; until: Date }[];
  // whether its CLI has an account set up, as its files and environment show (null: its manifest cannot tell)
  signIn: SignInReading;
  eligible: boolean;
  reasons: string[];
}

export interface PriorityInput {
  entries: readonly Entry[];
  autoDetect: boolean;
  providers: ReadonlyMap<string, Manifest>;
  detections: ReadonlyMap<string, Detection>;
  includeAll?: boolean;
}

export interface AssessContext {
  ceiling: Level;
  cooldowns: CooldownTable;
  now: Date;
  handoff?: boolean;
  // each entry's sign-in as read from its files and environment, by entry key; an entry without one cannot tell
  signIns?: ReadonlyMap<string, SignInReading>;
}

// The priority list: listed entries in config order, then installed unlisted providers in id order.
export function buildPriorityList(input: PriorityInput): Entry[] {
  const list = [...input.entries];
  if (!input.autoDetect && !input.includeAll) return list;
  const listedIds = new Set(list.map((entry) => entry.id));
  const listedKeys = new Set(list.map((entry) => entry.key));
  const ids = [...input.providers.keys()].filter((id) => !listedIds.has(id) && !listedKeys.has(id)).sort();
  for (const id of ids) {
    const installed = input.detections.get(id)?.installed === true;
    if ((installed && input.autoDetect) || input.includeAll) {
      list.push({ key: id, id, env: {}, args: [], origin: "detected" });
    }
  }
  return list;
}

// Why an entry that takes no first prompt cannot take over from another.
export const NO_PROMPT_REASON = "takes no first prompt, so it cannot continue a conversation";

// Decides whether one entry can start now, keeping every reason it cannot; unknown capability counts as unsupported.
export function assessEntry(
  entry: Entry,
  order: number,
  providers: ReadonlyMap<string, Manifest>,
  detections: ReadonlyMap<string, Detection>,
  context: AssessContext,
): Assessment {
  const manifest = providers.get(entry.id);
  const detection = detections.get(entry.id);
  const reasons: string[] = [];
  // rests are kept by account: an entry rests when its account does, whichever entry or machine met the wall
  const resting = restingUntil(context.cooldowns, accountOf(entry), context.now);
  const models = restingModels(context.cooldowns, accountOf(entry), context.now);
  if (resting) reasons.push(`resting until ${formatInstant(resting)}`);
  const signIn = context.signIns?.get(entry.key) ?? CANNOT_TELL;
  if (!manifest) {
    // the id may come from a cloned repository's config: its reasons are shown and printed, so they are made safe
    const near = closestWord(entry.id, installedFirst(providers, detections));
    reasons.push(`unknown provider "${escapeControls(entry.id)}": no valid manifest has this id${near ? `; did you mean "${near}"?` : ""}`);
    return { order, entry, manifest, detection, level: null, levelReasons: [], prompt: "none", restingUntil: resting, restingModels: models, signIn, eligible: false, reasons };
  }
  // a probe's problem quotes what the program printed
  const problem = detection?.problem === undefined ? undefined : escapeControls(detection.problem);
  if (!detection?.installed) reasons.push(`not installed: ${problem ?? "not looked for"}`);
  else if (!detection.recognised) reasons.push(detection.timedOut ? `version probe timed out: ${problem}` : problem ?? "not recognised");
  // a CLI that is not there cannot be signed in: only an installed one is told to
  else if (signIn.signedIn === false) reasons.push(notSignedInReason(manifest));
  const enforced = LEVELS.filter((level) => manifest.levels?.[level] !== undefined);
  let level = pickLevel(enforced, context.ceiling);
  const levelReasons: string[] = [];
  if (!level) {
    const known = enforced.length ? `it enforces only ${enforced.join(", ")}` : "its manifest names no level it enforces";
    levelReasons.push(`refused: cannot run within the ceiling "${context.ceiling}" (${known})`);
  }
  // the entry's own args may not start it at another level than the one uuldana names
  const stray = level ? strayPermissionFlag(entry.args, manifest, level) : undefined;
  const strayEnv = level ? strayPermissionEnv(entry.env, manifest) : undefined;
  if (stray && level) levelReasons.push(strayFlagReason(stray, manifest, level));
  if (strayEnv && level) levelReasons.push(strayEnvReason(strayEnv, manifest, level));
  if (stray || strayEnv) level = null;
  reasons.push(...levelReasons);
  const prompt = manifest.prompt?.mode ?? "none";
  if (context.handoff && prompt === "none") reasons.push(NO_PROMPT_REASON);
  return { order, entry, manifest, detection, level, levelReasons, prompt, restingUntil: resting, restingModels: models, signIn, eligible: reasons.length === 0, reasons };
}

const CANNOT_TELL: SignInReading = { signedIn: null, because: "not read" };

// Whether resting is all that keeps an entry from running: once its rest ends, it can run.
export function onlyResting(row: Assessment): boolean {
  return row.restingUntil !== undefined && row.reasons.length === 1;
}

// "opus until 2026-12-01 14:05 UTC, sonnet until …": the models of an entry that rest on their own.
export function describeRestingModels(models: readonly { model: string; until: Date }[]): string {
  return models.map((row) => `${escapeControls(row.model)} until ${formatInstant(row.until)}`).join(", ");
}

// "2026-12-01 14:05 UTC": short, unambiguous, the same on every machine.
export function formatInstant(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

// The known provider ids, installed ones first: what a mistyped id most likely meant.
function installedFirst(providers: ReadonlyMap<string, Manifest>, detections: ReadonlyMap<string, Detection>): string[] {
  const ids = [...providers.keys()];
  return [...ids.filter((id) => detections.get(id)?.installed), ...ids.filter((id) => !detections.get(id)?.installed)];
}
