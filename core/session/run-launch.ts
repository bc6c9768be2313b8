import { randomUUID } from "node:crypto";
import { basename, join } from "node:path";

import { jsonText } from "../base/json.js";
import type { CeilingInForce } from "../config/levels.js";
import { userLocale } from "../base/locale.js";
import type { QuotaQuery } from "../registry/adapter.js";
import type { ProviderHooks } from "../registry/provider.js";
import type { Manifest } from "../registry/types.js";
import type { Assessment } from "./eligibility.js";
import { saveSessionFile } from "./journal.js";
import { avoidResting, modelOf } from "./model-switch.js";
import type { RunReport, RunStart } from "./result.js";

// How one entry is started: its command line (the level's flags, a session id of uuldana's choosing, the handoff
// prompt), its environment, what its quota hooks are told, and the report the run fills in. Decided before the agent
// starts, from the entry and the run's own facts only.

// What a launch needs to know of the run beyond its entry.
export interface LaunchFacts {
  cwd: string;
  // the session's folder, for the run's own files (a status feed, settings)
  folder: string;
  runIndex: number;
  agentArgs: string[];
  prompt: string | undefined;
  promptFile: string | undefined;
  start: RunStart;
  nativeResume: string[] | undefined;
  restedUntil: Date | undefined;
  ceiling: Pick<CeilingInForce, "level" | "from">;
}

export interface Launch {
  manifest: Manifest;
  file: string;
  args: string[];
  env: Record<string, string>;
  // the CLI's session id, chosen by uuldana where the CLI lets its caller choose: its transcript is found by it
  sessionId: string | undefined;
  promptMode: string;
  // the handoff prompt the run starts with, if any
  prompt: string | undefined;
  quotaQuery: QuotaQuery;
  locale: string | undefined;
  // the model the run's own arguments chose, and the models that rest on their own
  model: string | undefined;
  restingModels: Set<string>;
  report: RunReport;
  // the run-start journal line's fields
  runStart: Record<string, unknown> & { argv: string[] };
}

// The launch of one entry; the adapter's run settings are added once its hooks are open (addSettings).
export function planLaunch(chosen: Assessment, facts: LaunchFacts): Launch {
  const manifest = chosen.manifest!;
  const level = chosen.level!;
  const flags = manifest.levels![level]!;
  const sessionId = chooseSessionId(manifest, [...chosen.entry.args, ...facts.agentArgs]);
  const idArgs = sessionId ? manifest.session_id!.args.map((arg) => arg.replaceAll("{id}", sessionId)) : [];
  // a model that rests on its own (it ran out at an earlier per-model limit) is not the one this run starts with
  const restingModels = new Set(chosen.restingModels.map((row) => row.model));
  const userArgs = avoidResting([...chosen.entry.args, ...facts.agentArgs], manifest, restingModels);
  const args = [...(manifest.args ?? []), ...(flags.args ?? []), ...idArgs, ...userArgs.args];
  const promptMode = manifest.prompt?.mode ?? "none";
  if (facts.prompt && promptMode === "argv") args.push(facts.prompt);
  if (facts.prompt && promptMode === "flag") args.push(manifest.prompt!.flag!, facts.prompt);
  // the level's environment comes last: an entry's env may not loosen what the level enforces
  const env = { ...stringEnv(process.env), ...chosen.entry.env, ...(flags.env ?? {}) };
  // a status-line source writes its feed in the session's folder
  const feed = manifest.quota?.source === "statusline" ? join(facts.folder, `status-${facts.runIndex}.json`) : undefined;
  const file = chosen.detection!.path!;
  const launch: Launch = {
    manifest,
    file,
    args,
    env,
    sessionId,
    promptMode,
    prompt: facts.prompt,
    quotaQuery: { cwd: facts.cwd, env, started: new Date(), sessionId, feed },
    // the agent prints dates in the locale of the environment it runs with
    locale: userLocale(env),
    model: modelOf(userArgs.args, manifest),
    restingModels,
    report: newReport(chosen, facts),
    runStart: {
      entry: chosen.entry.key,
      provider: chosen.entry.id,
      name: manifest.name,
      version: chosen.detection?.version ?? null,
      level,
      argv: [],
      ...(facts.promptFile ? { prompt_file: basename(facts.promptFile) } : {}),
    },
  };
  launch.runStart.argv = shownArgv(launch, facts);
  return launch;
}

// The run's own settings, where the CLI takes a settings file for one run: how it is told to feed uuldana its status.
export function addSettings(launch: Launch, hooks: ProviderHooks, facts: LaunchFacts): void {
  const settingsFlag = launch.manifest.quota?.settings_flag;
  const settings = settingsFlag ? hooks.launchSettings(launch.quotaQuery) : undefined;
  if (!settingsFlag || !settings) return;
  // the file holds the user's own status-line command as their settings give it: written as is, readable by them only
  const file = saveSessionFile(facts.folder, `settings-${facts.runIndex}.json`, jsonText(settings, 2) + "\n");
  const level = launch.manifest.levels![launch.report.level]!;
  const idArgs = launch.sessionId ? launch.manifest.session_id!.args.length : 0;
  launch.args.splice((launch.manifest.args ?? []).length + (level.args ?? []).length + idArgs, 0, settingsFlag, file);
  launch.runStart.argv = shownArgv(launch, facts);
}

// --- internal ---

function newReport(chosen: Assessment, facts: LaunchFacts): RunReport {
  return {
    entry: chosen.entry.key,
    provider: chosen.entry.id,
    name: chosen.manifest!.name,
    version: chosen.detection?.version ?? null,
    level: chosen.level!,
    start: facts.start,
    prompted: facts.prompt !== undefined,
    nativeResume: facts.nativeResume,
    restedUntil: facts.restedUntil,
    ...(facts.ceiling.from === "command line" || facts.ceiling.from === "project" ? { ceilingOrigin: { level: facts.ceiling.level, from: facts.ceiling.from } } : {}),
    end: "exited",
    exitCode: null,
    signal: null,
    stoppedBy: null,
    failure: undefined,
    took: undefined,
    limit: undefined,
    ignored: [],
    hookProblems: [],
    switches: [],
    durationMs: 0,
    userTurns: 0,
    conversationFrom: "screen",
  };
}

// The command line as the journal shows it: the prompt by its file, not its text.
function shownArgv(launch: Launch, facts: LaunchFacts): string[] {
  return [launch.file, ...launch.args.map((arg) => (arg === facts.prompt ? `<prompt: ${facts.promptFile}>` : arg))];
}

// A new session id for the CLI, where its manifest says how to give one and the run's own arguments pick no session
// of their own (the CLI's resume, or an id the user gave).
function chooseSessionId(manifest: Manifest, userArgs: readonly string[]): string | undefined {
  const spec = manifest.session_id;
  if (!spec) return undefined;
  const flags = new Set([...(spec.unless ?? []), ...spec.args.filter((arg) => arg.startsWith("-")), ...(manifest.resume?.args ?? []).filter((arg) => arg.startsWith("-"))]);
  const picks = userArgs.some((arg) => flags.has(arg) || [...flags].some((flag) => flag.startsWith("--") && arg.startsWith(`${flag}=`)));
  return picks ? undefined : randomUUID();
}

function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) result[key] = value;
  return result;
}
