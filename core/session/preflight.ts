import { basename } from "node:path";

import type { Context } from "../config/context.js";
import type { Level } from "../config/levels.js";
import { UuldanaError } from "../base/errors.js";
import { escapeControls } from "../base/safe-text.js";
import { formatWait } from "../base/time.js";
import { helpKey, launchFlags, readHelpFlags, type HelpAnswer } from "../registry/help-flags.js";
import { runProbe } from "../registry/probe.js";
import { openProvider } from "../registry/provider.js";
import { notSignedInReason } from "../registry/sign-in.js";
import type { ManifestRecord } from "../registry/types.js";
import { NO_PROMPT_REASON, describeRestingModels, formatInstant, type Assessment } from "./eligibility.js";
import { assessProviders } from "./priority.js";
import { percentLeft, readQuota, type QuotaReading, type QuotaWindow } from "./quota-store.js";

// Could an entry take over now? The priority list's own verdict on it (installed, version, signed in, level, prompt,
// resting), with what only asking the CLI itself shows (its --help lists every flag uuldana would pass; its status
// command, where its files cannot tell, whether it is signed in) and what the agent last said of its allowance — each as one check with its reason. Nothing here starts a conversation or spends quota.

// The checks, in the order they are shown; their names are stable (preflight --json).
export const PREFLIGHT_CHECKS = ["installed", "version", "signed-in", "flags", "level", "prompt", "quota", "resting"] as const;

export type PreflightCheckName = (typeof PREFLIGHT_CHECKS)[number];

export interface PreflightCheck {
  name: PreflightCheckName;
  ok: boolean;
  // the result and its reason, on one line
  detail: string;
}

// One entry's checks; ready when every one is ok.
export interface EntryPreflight {
  entry: string;
  provider: string;
  name: string | undefined;
  ready: boolean;
  checks: PreflightCheck[];
}

export interface PreflightResult {
  entries: EntryPreflight[];
  // the notes of the priority list (config notes, broken manifests, a cooldown table that cannot be read)
  notes: string[];
  ceiling: Level;
  // every key the priority list holds, for the message when the entry named is none of them
  keys: string[];
}

export interface PreflightOptions {
  // one entry's key; every entry of the priority list when none is given
  entry?: string;
  now?: Date;
}

// The checks of one entry, or of every entry of the priority list. A named entry that is no entry of it gives no
// checks: the caller says so with the keys there are. With auto_detect, a known provider that is not installed is
// an entry too once it is, so naming one checks it.
export async function preflight(context: Context, options: PreflightOptions = {}): Promise<PreflightResult> {
  const now = options.now ?? new Date();
  const named = options.entry;
  const all = named !== undefined && context.config.autoDetect;
  const { rows, notes, ceiling, records } = await assessProviders(context, { handoff: true, now, all });
  const keys = rows.map((row) => row.entry.key);
  const chosen = named === undefined ? rows : rows.filter((row) => row.entry.key === named);
  // each CLI's --help is asked once, all at once; entries of one provider share its adapter
  const asked = chosen.flatMap((row) =>
    row.manifest && row.detection?.installed && row.detection.path && launchFlags(row.manifest, row.level).length > 0 ? [{ path: row.detection.path, version: row.detection.version }] : [],
  );
  const helps = await readHelpFlags(asked, { env: context.env, cacheDir: context.dirs.cache });
  const adapters = new Map<string, Promise<QuotaHooks>>();
  const entries = await Promise.all(
    chosen.map(async (row): Promise<EntryPreflight> => {
      const [quota, signedIn] = await Promise.all([checkQuota(context, row, records.get(row.entry.id), adapters, now), checkSignedIn(context, row)]);
      const checks = [checkInstalled(row), checkVersion(row), signedIn, checkFlags(row, helps), checkLevel(row, ceiling), checkPrompt(row), quota, checkResting(row, now)];
      const safe = checks.map((check) => ({ ...check, detail: escapeControls(check.detail) }));
      return { entry: row.entry.key, provider: row.entry.id, name: row.manifest?.name, ready: safe.every((check) => check.ok), checks: safe };
    }),
  );
  return { entries, notes, ceiling, keys };
}

// --- internal ---

// Whether the adapter reads native quota, or why it cannot be asked.
type QuotaHooks = { hooks: boolean; problem?: undefined } | { hooks?: undefined; problem: string };

function checkInstalled(row: Assessment): PreflightCheck {
  if (!row.manifest) return { name: "installed", ok: false, detail: `unknown provider: no valid manifest has the id "${row.entry.id}"` };
  if (row.detection?.installed) return { name: "installed", ok: true, detail: row.detection.path ?? "" };
  return { name: "installed", ok: false, detail: row.detection?.problem ?? "not looked for" };
}

function checkVersion(row: Assessment): PreflightCheck {
  const detection = row.detection;
  if (!row.manifest || !detection?.installed) return { name: "version", ok: false, detail: `not checked: ${notThere(row)}` };
  if (!detection.recognised) return { name: "version", ok: false, detail: detection.problem ?? "not recognised" };
  const from =
    detection.versionFrom === "package"
      ? `from the package.json of ${row.manifest.npm_package}`
      : `"${[row.manifest.executables[0], ...row.manifest.version.args].join(" ")}" matched its version pattern`;
  return { name: "version", ok: true, detail: `${detection.version}, ${from}` };
}

// Whether the CLI has an account set up: what its files and environment show, and where they cannot tell, what its
// status command says (its exit status). A status command that gives no answer leaves it not checked, as does a
// manifest that does not say how to tell: neither fails the check.
async function checkSignedIn(context: Context, row: Assessment): Promise<PreflightCheck> {
  const name = "signed-in";
  const manifest = row.manifest;
  if (!manifest || !row.detection?.installed || !row.detection.path) return { name, ok: false, detail: `not checked: ${notThere(row)}` };
  const { signedIn, because } = row.signIn;
  if (signedIn === true) return { name, ok: true, detail: `signed in: ${because}` };
  if (signedIn === false) return { name, ok: false, detail: `${notSignedInReason(manifest)} (${because})` };
  const status = manifest.sign_in?.status;
  if (!status) return { name, ok: true, detail: `not checked: ${because}` };
  const command = `"${[basename(row.detection.path), ...status.args].join(" ")}"`;
  const seconds = status.timeout_seconds ?? 10;
  const asked = await runProbe(row.detection.path, status.args, { env: { ...context.env, ...row.entry.env }, timeoutSeconds: seconds, cwd: context.cwd });
  if (asked.timedOut) return { name, ok: true, detail: `not checked: ${command} gave no answer within ${seconds} s` };
  if (asked.exitCode === 0) return { name, ok: true, detail: `signed in: ${command} exited 0` };
  if (asked.exitCode === null) return { name, ok: true, detail: `not checked: ${command} ${asked.output.startsWith("cannot start") ? asked.output : "ended without an exit status"}` };
  return { name, ok: false, detail: `${notSignedInReason(manifest)} (${command} exited ${asked.exitCode})` };
}

// Every flag a start at the entry's level would pass, looked for in the CLI's own --help.
function checkFlags(row: Assessment, helps: ReadonlyMap<string, HelpAnswer>): PreflightCheck {
  const path = row.detection?.path;
  if (!row.manifest || !row.detection?.installed || !path) return { name: "flags", ok: false, detail: `not checked: ${notThere(row)}` };
  const flags = launchFlags(row.manifest, row.level);
  const noLevel = row.level ? "" : " (it has no level to run at, so no level's flags)";
  if (flags.length === 0) return { name: "flags", ok: true, detail: `uuldana passes it no flag${noLevel}` };
  const answer = helps.get(helpKey(path, row.detection.version))!;
  if (answer.problem !== undefined) return { name: "flags", ok: false, detail: answer.problem };
  const command = `"${basename(path)} --help"`;
  const missing = flags.filter(({ flag }) => !answer.flags.has(flag));
  if (missing.length > 0) return { name: "flags", ok: false, detail: `${command} does not list ${missing.map(({ flag, from }) => `${flag} (${from})`).join(", ")}` };
  return { name: "flags", ok: true, detail: `${command} lists ${flags.map(({ flag }) => flag).join(", ")}${noLevel}` };
}

function checkLevel(row: Assessment, ceiling: Level): PreflightCheck {
  if (!row.manifest) return { name: "level", ok: false, detail: `not checked: ${notThere(row)}` };
  if (row.level) return { name: "level", ok: true, detail: `${row.level}, the highest level it enforces within the ceiling ${ceiling}` };
  return { name: "level", ok: false, detail: row.levelReasons.join("; ") };
}

function checkPrompt(row: Assessment): PreflightCheck {
  if (!row.manifest) return { name: "prompt", ok: false, detail: `not checked: ${notThere(row)}` };
  const how: Record<Assessment["prompt"], string> = {
    argv: "the first prompt is its last argument",
    flag: `the first prompt is given with ${row.manifest.prompt?.flag}`,
    typed: "uuldana types the first prompt once its screen is ready",
    none: NO_PROMPT_REASON,
  };
  return { name: "prompt", ok: row.prompt !== "none", detail: `${row.prompt}: ${how[row.prompt]}` };
}

// Where the agent's own quota numbers come from, and the last of them. Only an adapter that will not load (the entry
// could not start) or a reading that says the allowance is gone until a reset still ahead fails the check.
async function checkQuota(context: Context, row: Assessment, record: ManifestRecord | undefined, adapters: Map<string, Promise<QuotaHooks>>, now: Date): Promise<PreflightCheck> {
  const manifest = row.manifest;
  if (!manifest || !record) return { name: "quota", ok: false, detail: `not checked: ${notThere(row)}` };
  let adapter = adapters.get(manifest.id);
  if (!adapter) {
    adapter = quotaHooks(record);
    adapters.set(manifest.id, adapter);
  }
  const hooks = await adapter;
  if (hooks.problem !== undefined) return { name: "quota", ok: false, detail: hooks.problem };
  const source = manifest.quota?.source;
  const reading = readQuota(context.dirs.data, row.entry.key);
  let where: string;
  if (source && hooks.hooks) where = `${source}, read by its adapter`;
  else if (source) where = `${source}, named by its manifest, but ${manifest.adapter ? "its adapter has no quota hook" : "it has no adapter to read it"}`;
  else if (hooks.hooks) where = "its adapter has quota hooks, but its manifest names no quota.source";
  else if (!reading) return { name: "quota", ok: true, detail: "no native source: its limits are read from its screen only" };
  else where = "no native source";
  if (!reading) return { name: "quota", ok: true, detail: `${where}: no reading yet` };
  const { text, gone } = describeReading(reading, now);
  return { name: "quota", ok: !gone, detail: `${where}: ${text}` };
}

// The adapter opened as a run opens it (a pack's in a thread of its own, so that one that never loads cannot hold
// preflight), only to see which hooks it gives.
async function quotaHooks(record: ManifestRecord): Promise<QuotaHooks> {
  try {
    const hooks = await openProvider(record, { report: () => undefined });
    hooks.close();
    return { hooks: hooks.hasQuota || hooks.hasQuotaFiles };
  } catch (error) {
    if (error instanceof UuldanaError) return { problem: error.message };
    throw error;
  }
}

// "5-hour window 3% left, read 4 minutes ago": the window with the least share left; one at 0% until a reset still
// ahead means the allowance is gone.
function describeReading(reading: QuotaReading, now: Date): { text: string; gone: boolean } {
  const age = `read ${formatWait(now.getTime() - reading.at.getTime())} ago`;
  const left = percentLeft(reading);
  const least = reading.windows.find((window) => Math.max(0, 100 - window.usedPercent) === left);
  if (!least) return { text: `a reading without windows, ${age}`, gone: false };
  const gone = left <= 0 && least.resetsAt !== undefined && least.resetsAt.getTime() > now.getTime();
  const until = gone ? ` until ${formatInstant(least.resetsAt!)}` : "";
  return { text: `${windowName(least)} ${Math.round(left * 10) / 10}% left${until}, ${age}`, gone };
}

// "5-hour window", "7-day window", else the agent's own name for it ("five-hour window").
function windowName(window: QuotaWindow): string {
  const minutes = window.windowMinutes;
  if (minutes && minutes % 1440 === 0) return `${minutes / 1440}-day window`;
  if (minutes && minutes % 60 === 0) return `${minutes / 60}-hour window`;
  if (minutes) return `${minutes}-minute window`;
  return `${window.name.replace(/_/g, "-")} window`;
}

function checkResting(row: Assessment, now: Date): PreflightCheck {
  const models = row.restingModels.length ? `; model resting: ${describeRestingModels(row.restingModels)}` : "";
  if (!row.restingUntil) return { name: "resting", ok: true, detail: `not resting${models}` };
  return { name: "resting", ok: false, detail: `resting until ${formatInstant(row.restingUntil)}, ${formatWait(row.restingUntil.getTime() - now.getTime())} from now` };
}

function notThere(row: Assessment): string {
  return row.manifest ? "not installed" : "unknown provider";
}
