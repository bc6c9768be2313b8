import { UuldanaError } from "../base/errors.js";
import { formatHookProblem, openProvider, type ProviderHooks } from "../registry/provider.js";
import { RunEngine } from "./run-engine.js";
import { addSettings, planLaunch, type Launch, type LaunchFacts } from "./run-launch.js";
import type { EntryRunEnd, EntryRunOptions, RunSettings } from "./run-options.js";

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
    ceiling: { level: options.ceiling, from: options.ceilingFrom },
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
