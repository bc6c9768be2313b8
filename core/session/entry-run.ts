import { UuldanaError } from "../base/errors.js";
import { formatAdapterOff, formatHookProblem, openProvider, type HookProblem, type ProviderHooks } from "../registry/provider.js";
import { packOf } from "../registry/types.js";
import { RunEngine } from "./run-engine.js";
import { addSettings, planLaunch, type Launch, type LaunchFacts } from "./run-launch.js";
import type { EntryRunEnd, EntryRunOptions, RunSettings } from "./run-options.js";

// One run of one entry: started with its level's flags (and the handoff prompt), watched for a gone allowance by its
// state machine (run-machine.ts decides, run-engine.ts carries the moves out). An agent that will not start is a
// failed start; an adapter that will not load is said once and the run goes on without it.
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
    ceiling: { level: options.ceiling, from: options.ceilingFrom },
  };
  const launch = planLaunch(options.chosen, facts);
  options.starting(launch.report);
  const hooks = await openHooks(launch, options);
  addSettings(launch, hooks, facts);
  try {
    return await new RunEngine(settings, options, launch, hooks, options.gate).start();
  } catch (error) {
    if (error instanceof UuldanaError && error.code === "E_AGENT_START") return failedStart(launch, options, error.message);
    throw error;
  } finally {
    // the adapter's thread lives on, for the conversation handed on; it never holds uuldana's exit
    hooks.settle();
  }
}

// --- internal ---

// The adapters turned off in this session (one that would not load, hung or ended its thread), by manifest file: a
// later run of the same provider goes without it, and without saying so again.
const turnedOff = new Set<string>();

// The provider's adapter, imported now that it runs. One that will not load (it throws, loops, never settles, exits, or
// exports no hooks) is turned off for the session: said once, journaled, and the provider runs as if it had none.
async function openHooks(launch: Launch, options: EntryRunOptions): Promise<ProviderHooks> {
  const report = launch.report;
  const pack = packOf(options.record.source);
  const opening = {
    withoutAdapter: turnedOff.has(options.record.file),
    report: (problem: HookProblem) => {
      if (problem.failure === "hung" || problem.failure === "exited") turnedOff.add(options.record.file);
      report.hookProblems.push(formatHookProblem(problem));
      options.journal.write("hook-off", { entry: report.entry, provider: problem.provider, ...(problem.pack ? { pack: problem.pack } : {}), ...(problem.hook ? { hook: problem.hook } : {}), failure: problem.failure, message: problem.message });
    },
  };
  try {
    return await openProvider(options.record, opening);
  } catch (error) {
    if (!(error instanceof UuldanaError) || (error.code !== "E_ADAPTER_LOAD" && error.code !== "E_ADAPTER_INVALID")) throw error;
    turnedOff.add(options.record.file);
    report.hookProblems.push(formatAdapterOff(error));
    options.journal.write("hook-off", { entry: report.entry, provider: options.record.manifest!.id, ...(pack ? { pack } : {}), failure: "load", message: error.message, code: error.code });
    return await openProvider(options.record, { ...opening, withoutAdapter: true });
  }
}

function failedStart(launch: Launch, options: EntryRunOptions, failure: string): EntryRunEnd {
  options.journal.write("run-start", launch.runStart);
  return { report: { ...launch.report, end: "failed-start", failure }, part: undefined };
}
