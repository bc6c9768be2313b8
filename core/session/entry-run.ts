import { UuldanaError } from "../base/errors.js";
import type { Level } from "../config/levels.js";
import { formatHookProblem, openProvider, type ProviderHooks } from "../registry/provider.js";
import type { ManifestRecord } from "../registry/types.js";
import type { Assessment } from "./eligibility.js";
import type { RunPart } from "./handoff.js";
import type { Journal } from "./journal.js";
import { RunEngine } from "./run-engine.js";
import { addSettings, planLaunch, type Launch, type LaunchFacts } from "./run-launch.js";
import type { ScreenGate } from "./receiver.js";
import type { RunReport, RunStart } from "./result.js";

// The settings a run reads: the few config values and places it uses, not the session's whole context.
export interface RunSettings {
  cwd: string;
  dataDir: string;
  // the user's config.json, which /agent changes
  userFile: string;
  quietSeconds: number;
  dismissSeconds: number;
  cooldownMinutes: number;
  receiverSeconds: number;
  rotateAtPercentLeft: number | undefined;
  returnHome: boolean;
  commandKey: string;
  scrollback: number;
}

export interface EntryRunOptions {
  chosen: Assessment;
  agentArgs: string[];
  prompt: string | undefined;
  promptFile: string | undefined;
  ceiling: Level;
  sessionId: string;
  journal: Journal;
  // the run's number in the session, for its files
  runIndex: number;
  start: RunStart;
  nativeResume: string[] | undefined;
  restedUntil: Date | undefined;
  // another entry can take over when this one's allowance is gone; why not, when it cannot
  failover: boolean;
  why: string;
  rows: Assessment[];
  // the manifest file of the entry's provider, for its adapter and patterns
  record: ManifestRecord;
  models: readonly string[];
  // the session's redactor, for what leaves the journal's hands (the cooldown row), and for lines kept as lines
  redact: (text: string) => string;
  redactLines: (lines: readonly string[]) => string[];
  terminal: { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream } | undefined;
  // aborted when the session must end; a run that starts just after is stopped at once
  stopped: AbortSignal;
  // told once the run is set up, before the agent starts
  starting: (run: RunReport) => void;
  // the agent's pid while it runs, for a crash of uuldana to stop it
  active: (pid: number | undefined) => void;
  // whether the agent's screen asks to sign in or asks the user a question first (its manifest's lines)
  gate?: (visible: readonly string[]) => ScreenGate | undefined;
}

// What a run leaves for the next: its report and its part of the conversation.
export interface EntryRunEnd {
  report: RunReport;
  part: RunPart | undefined;
}

// One run of one entry: started with its level's flags (and the handoff prompt), watched for a gone allowance by its
// state machine (run-machine.ts decides, run-engine.ts carries the moves out). An adapter that will not load, or an
// agent that will not start, is a failed start.
export async function runEntry(settings: RunSettings, options: EntryRunOptions): Promise<EntryRunEnd> {
  const facts: LaunchFacts = {
    cwd: settings.cwd,
    folder: options.journal.folder,
    runIndex: options.runIndex,
    agentArgs: options.agentArgs,
    prompt: options.prompt,
    promptFile: options.promptFile,
    start: options.start,
    nativeResume: options.nativeResume,
    restedUntil: options.restedUntil,
  };
  const launch = planLaunch(options.chosen, facts);
  options.starting(launch.report);
  const hooks = await openHooks(launch, options);
  if (typeof hooks === "string") return failedStart(launch, options, hooks);
  addSettings(launch, hooks, facts);
  try {
    return await new RunEngine(settings, options, launch, hooks, options.gate).start();
  } catch (error) {
    if (error instanceof UuldanaError && error.code === "E_AGENT_START") return failedStart(launch, options, error.message);
    throw error;
  }
}

// --- internal ---

// The provider's adapter, imported now that it runs; why not, when it will not load (its entry does not start).
async function openHooks(launch: Launch, options: EntryRunOptions): Promise<ProviderHooks | string> {
  const report = launch.report;
  try {
    return await openProvider(options.record, {
      report: (problem) => {
        report.hookProblems.push(formatHookProblem(problem));
        options.journal.write("hook-off", { entry: report.entry, provider: problem.provider, ...(problem.pack ? { pack: problem.pack } : {}), hook: problem.hook, failure: problem.failure, message: problem.message });
      },
    });
  } catch (error) {
    if (!(error instanceof UuldanaError) || (error.code !== "E_ADAPTER_LOAD" && error.code !== "E_ADAPTER_INVALID")) throw error;
    return `${error.message} [${error.code}]`;
  }
}

function failedStart(launch: Launch, options: EntryRunOptions, failure: string): EntryRunEnd {
  options.journal.write("run-start", launch.runStart);
  return { report: { ...launch.report, end: "failed-start", failure }, part: undefined };
}
