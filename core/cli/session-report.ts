import { ceilingOrigin } from "../config/levels.js";
import { UuldanaError, formatError } from "../base/errors.js";
import { escapeControls, safeOutput } from "../base/safe-text.js";
import type { Context } from "../config/context.js";
import { formatDuration } from "../base/time.js";
import { describeIgnored } from "../reader/detector.js";
import { formatInstant } from "../session/eligibility.js";
import { limitName, type LimitEvent, type NothingCanRun, type RunReport, type SessionEvent, type SessionResult } from "../session/result.js";
import { runSession, type SessionOptions } from "../session/session.js";
import { result, type CommandResult } from "./result.js";

// The lines uuldana says about a session: one as each run starts or fails to start, and its ending. Shared by run,
// resume and demo, which differ only in where the lines go.

// A session rendered as run and resume show it: each line said on stderr as the session goes, the ending returned.
export async function renderSession(context: Context, options: SessionOptions): Promise<CommandResult> {
  // uuldana's own lines quote ids, names, versions and notes from files and programs: made safe before they are said
  const say = (line: string): void => void process.stderr.write(`${safeOutput(line)}\n`);
  const waitLine = new WaitLine(process.stderr);
  const session = await runSession(context, {
    ...options,
    onEvent: (event) => {
      if (event.type === "waiting") return waitLine.show(event, describeEvent(event));
      waitLine.end();
      describeEvent(event).forEach(say);
    },
  });
  waitLine.end();
  return result("", describeEnding(session), session.exitCode);
}

// The wait for a resting entry, said as it goes: on a terminal one countdown line rewritten in place at each look
// (about once a minute); elsewhere (a log) a line each time what is awaited changes, never a flood of rewrites.
export class WaitLine {
  private shown: string | undefined;
  private open = false;

  constructor(private readonly out: NodeJS.WriteStream) {}

  show(event: Extract<SessionEvent, { type: "waiting" }>, lines: string[]): void {
    const [first, ...rest] = lines;
    const state = `${event.entry} ${event.until.toISOString()}`;
    if (event.first) for (const line of rest) this.out.write(`${safeOutput(line)}\n`);
    if (this.out.isTTY) {
      this.out.write(`\r\x1b[2K${safeOutput(first ?? "")}`);
      this.open = true;
    } else if (event.first || state !== this.shown) this.out.write(`${safeOutput(first ?? "")}\n`);
    this.shown = state;
  }

  // The countdown line is done: what follows begins on a line of its own.
  end(): void {
    if (this.open) this.out.write("\n");
    this.open = false;
  }
}

// The line said for an event as the session goes, if it has one.
export function describeEvent(event: SessionEvent, options: { commandKey?: boolean } = {}): string[] {
  switch (event.type) {
    case "notes":
      return event.notes;
    case "run-starting":
      return [`uuldana: ${opening(event.run, event.previous)}${options.commandKey === false ? "" : ` · ${event.commandKey} opens uuldana's prompt`}`];
    case "start-failed":
      // handed the conversation, it never took it: the next entry is tried with the same conversation
      if (event.run.took === false) return [`uuldana: ${event.run.entry} did not take over (${event.run.failure}); trying the next entry`];
      return [`uuldana: ${event.run.entry} could not start (${event.run.failure})`];
    case "waiting":
      // the countdown first, then (as the wait begins) why each entry cannot run now
      return [
        `uuldana: every entry is resting; waiting for ${event.entry} to return at ${formatInstant(event.until)} (in ${formatDuration(Math.max(0, event.until.getTime() - Date.now()))}) · Ctrl+C to stop`,
        ...event.nothingCanRun.entries.map(({ entry, reasons }) => `  ${escapeControls(entry)}: ${reasons.join("; ") || "already tried in this session"}`),
      ];
    case "wait-over":
      return [`uuldana: ${event.entry} has returned; the wait is over`];
    case "run-ended":
      return [
        ...event.run.switches.map((one) => `uuldana: ${event.run.entry} switched from ${one.from} to ${one.to} at the ${one.from} model's limit; ${one.from} rests until ${formatInstant(one.restsUntil)}`),
        ...event.run.hookProblems,
        ...(event.run.limit?.cooldownNotice ? [cooldownLine(event.run, event.run.limit)] : []),
      ];
  }
}

// What uuldana says when the session has ended: what was ignored or left running, then how it ended.
export function describeEnding(result: SessionResult): string {
  const moved = result.runs.findLast((run) => run.limit?.action === "failover");
  const notWaiting = result.waitedTooLong ? "uuldana: not waiting: the first resting entry returns later than wait_max_hours allows\n" : "";
  if (result.ending === "no-entry") return (moved ? `uuldana: ${gone(moved, moved.limit!)}.\n` : "") + notWaiting + formatError(noEntryError(result.nothingCanRun!));
  const last = result.runs.at(-1);
  // a signal between runs: before the first, after a failover, or after a start that failed
  if (!last || (result.ending === "signal" && (last.limit?.action === "failover" || last.end === "failed-start"))) {
    return `uuldana: stopped by ${result.signal}${moved ? ` (${gone(moved, moved.limit!)})` : ""}\n`;
  }
  const lines = last.ignored.map((ignored) => `uuldana: ${describeIgnored(ignored)}`);
  if (last.limit?.paid?.taken) {
    const chose = last.limit.paid.answer === "go on" ? "you chose to let it go on with it" : 'paid_usage is "allow", so it was left to go on with it';
    lines.push(`uuldana: ${last.entry} said its usage allowance is gone (${limitName(last.limit)}) and offered paid usage ("${escapeControls(last.limit.paid.offer)}"); ${chose}, and nothing rests`);
  } else if (last.limit?.action === "left to the agent") {
    const what = last.limit.offer?.kind === "switch" ? "switch to another model" : "wait for its reset";
    lines.push(`uuldana: ${last.entry} said its usage allowance is gone (${limitName(last.limit)}; rests until ${formatInstant(last.limit.restsUntil)}); native_wait is "allow", so it was left to ${what} by itself`);
  }
  if (last.limit?.action === "kept running") {
    lines.push(`uuldana: ${last.entry} said its usage allowance is gone (${limitName(last.limit)}; rests until ${formatInstant(last.limit.restsUntil)}); ${last.limit.why} so it keeps running`);
  }
  lines.push(runEnding(last));
  return lines.join("\n") + "\n";
}

// --- internal ---

// Why no entry can run, as an error of its own: one detail line per entry, and when the first resting one returns.
function noEntryError(facts: NothingCanRun): UuldanaError {
  if (facts.entries.length === 0) {
    return new UuldanaError("E_NO_ELIGIBLE_ENTRY", "no entry can run: no provider is listed in config.json and none is installed", {
      hint: 'install an agent CLI, or list one in config.json; "uuldana providers list --all" shows every known provider',
    });
  }
  const details = facts.entries.map(({ entry, reasons }) => `  ${escapeControls(entry)}: ${reasons.join("; ") || "already tried in this session"}`);
  const minutes = facts.firstReturn ? Math.max(1, Math.ceil((facts.firstReturn.getTime() - Date.now()) / 60_000)) : undefined;
  return new UuldanaError("E_NO_ELIGIBLE_ENTRY", `no entry can run under the ceiling ${facts.ceiling}`, {
    details,
    ...(facts.firstReturn ? { hint: `the first resting entry returns in ${minutes} minute${minutes === 1 ? "" : "s"} (${formatInstant(facts.firstReturn)})` } : {}),
  });
}

function opening(run: RunReport, previous: RunReport | undefined): string {
  const origin = run.ceilingOrigin ? ` (${ceilingOrigin(run.ceilingOrigin, true)})` : "";
  const starting = `${run.entry} (${run.name} ${run.version ?? ""}) at ${run.level}${origin}${run.prompted ? " with the conversation so far" : ""}`;
  if (run.nativeResume) return `resuming ${run.entry}'s own conversation (${run.nativeResume.join(" ")}); starting ${starting}`;
  // an agent whose transcript was looked for and not found: its part of the conversation is what its screen showed
  const fromScreen = previous?.conversationFrom === "screen, its transcript unread" && run.prompted ? ` (${previous.entry}'s part from its screen: its transcript could not be found or read)` : "";
  if (previous) return `${gone(previous, previous.limit!)}; continuing with ${starting}${fromScreen}`;
  if (run.restedUntil) return `${run.entry} has rested (its allowance returned at ${formatInstant(run.restedUntil)}); starting it again: ${starting}`;
  return `starting ${starting}`;
}

function gone(run: RunReport, limit: LimitEvent): string {
  if (limit.reason === "rotate") return `${run.entry}: ${limit.text}, so it was rotated before its allowance ran out; it rests until ${formatInstant(limit.restsUntil)}`;
  if (limit.reason === "home") return `${limit.text}; ${run.entry} hands the work back`;
  if (limit.reason === "shared-rest") return `${run.entry} was rested by another uuldana session (${limitName(limit)}); it rests until ${formatInstant(limit.restsUntil)}`;
  return `${run.entry}'s ${limitName(limit)} is gone${limit.source === "native" ? " by its own account" : ""}; it rests until ${formatInstant(limit.restsUntil)}`;
}

function cooldownLine(run: RunReport, limit: LimitEvent): string {
  return `uuldana: ${limit.rested ? "" : `${run.entry}'s rest until ${formatInstant(limit.restsUntil)} is not in the cooldown table yet: `}${limit.cooldownNotice}`;
}

function runEnding(run: RunReport): string {
  const after = formatDuration(run.durationMs);
  if (run.stoppedBy) return `uuldana: stopped ${run.entry} (${run.name}) with ${run.stoppedBy === "keys" ? "its exit keys" : run.stoppedBy} after ${after}`;
  if (run.signal) return `uuldana: ${run.entry} (${run.name}) was killed by signal ${run.signal} after ${after}`;
  return `uuldana: ${run.entry} (${run.name}) exited with code ${run.exitCode} after ${after}`;
}

// A session shown on a terminal whose keys cannot reach it (uuldana run </dev/null): the agent would draw its screen
// there and wait, unseen, for keys that never come. Both ends redirected is a script driving the agent, and stays.
export function refuseLostKeyboard(command: string): void {
  if (process.stdin.isTTY || !process.stdout.isTTY) return;
  throw new UuldanaError("E_USAGE", `${command} shows the agent on this terminal, but its standard input is not the terminal, so no key you type would reach the agent`, {
    hint: `start it without redirecting its input (uuldana ${command}); a script that drives the agent redirects its output too (uuldana ${command} < keys > screen.log)`,
  });
}
