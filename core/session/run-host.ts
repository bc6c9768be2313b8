import { ceilingOrigin } from "../config/levels.js";
import { escapeControls } from "../base/safe-text.js";
import { changeOrder, type OrderChange } from "../config/agent-order.js";
import type { DrawnAround } from "../host/drawn-lines.js";
import type { HostOptions } from "../host/host.js";
import { describeIgnored, type DetectorEvent } from "../reader/detector.js";
import type { Verdict } from "../reader/reader.js";
import type { ProviderHooks } from "../registry/provider.js";
import { formatInstant, type Assessment } from "./eligibility.js";
import type { EntryRunOptions, RunSettings } from "./run-options.js";
import type { Launch } from "./run-launch.js";

// What the host is told for one run: the agent's command line, the reader, the terminal, the lines of uuldana's own
// prompt, and where the events it sees go.

export interface HostCallbacks {
  onDrawn: (lines: readonly string[]) => void;
  onKey: () => void;
  onUserTurn: (text: string) => void;
  onDetection: (event: DetectorEvent, drawn: DrawnAround) => void;
}

export function hostOptions(settings: RunSettings, options: EntryRunOptions, launch: Launch, hooks: ProviderHooks, classify: (text: string) => Verdict, callbacks: HostCallbacks, record?: (line: string) => "agent" | "tool" | undefined): HostOptions {
  const prompt = options.prompt;
  return {
    file: launch.file,
    args: launch.args,
    env: launch.env,
    cwd: settings.cwd,
    entry: launch.report.entry,
    // the title names where the ceiling came from when the user typed it or a project set it
    level: [launch.report.level, launch.report.ceilingOrigin && `(${ceilingOrigin(launch.report.ceilingOrigin, false)})`].filter(Boolean).join(" "),
    exit: launch.manifest.exit,
    commandKey: settings.commandKey,
    scrollback: settings.scrollback,
    ...options.terminal,
    ...(prompt ? { firstPrompt: prompt } : {}),
    ...(prompt && launch.promptMode === "typed" ? { typedPrompt: { text: prompt, ready: (screen: readonly string[]) => hooks.ready(screen) === true } } : {}),
    detect: { quietSeconds: settings.quietSeconds, dismissSeconds: settings.dismissSeconds, classify, busy: hooks.busy, ...(launch.manifest.notice_style ? { notice: launch.manifest.notice_style } : {}), ...(record ? { record } : {}) },
    redactLines: options.redactLines,
    ...callbacks,
    describe: describeRun(settings, options, launch),
  };
}

// The lines about the session in uuldana's prompt: its header, /status and /agent.
function describeRun(settings: RunSettings, options: EntryRunOptions, launch: Launch): NonNullable<HostOptions["describe"]> {
  // one line each: a key from a project's config may not break its line
  const resting = options.rows.filter((row) => row.restingUntil).map((row) => `${escapeControls(row.entry.key)} until ${formatInstant(row.restingUntil!)}`);
  const restingText = resting.length ? resting.join(", ") : "none";
  const report = launch.report;
  return {
    header: () => [`session ${options.sessionId} · ceiling ${options.ceiling}`, `resting: ${restingText}`, ...report.ignored.map(describeIgnored), ...report.hookProblems],
    status: () => [`session ${options.sessionId}`, `ceiling ${options.ceiling}; resting: ${restingText}`],
    agent: (words) => agentCommand(settings.userFile, options.rows, words),
  };
}

// /agent in uuldana's prompt: the priority list, or a change to its order in config.json.
function agentCommand(userFile: string, rows: Assessment[], words: string): string[] {
  const [verb, key] = words.split(/\s+/);
  if (!verb) {
    return [
      "priority list:",
      ...rows.map((row) => `  ${row.order}. ${escapeControls(row.entry.key)}: ${row.eligible ? `ready at ${row.level}` : row.reasons.join("; ")}`),
      "change it: /agent up|down|first|remove ENTRY, or /agent add PROVIDER",
    ];
  }
  if (!["up", "down", "first", "add", "remove"].includes(verb) || !key) return ["usage: /agent [up|down|first|remove ENTRY | add PROVIDER]"];
  return [escapeControls(changeOrder(userFile, verb as OrderChange, key)), "the next failover walks this order"];
}
