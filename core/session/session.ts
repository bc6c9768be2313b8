import { existsSync } from "node:fs";
import { join } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { processStarted, signalNumber } from "../base/process.js";
import { VERSION } from "../base/version.js";
import { addSecrets, redactorFor } from "../config/redaction.js";
import { loadConfig } from "../config/config.js";
import type { Context } from "../config/context.js";
import { effectiveCeiling, type Level } from "../config/levels.js";
import { stopGroupNow } from "../host/stop.js";
import { compileLinePatterns } from "../registry/patterns.js";
import { strayFlagError, strayPermissionFlag } from "../registry/permission-flags.js";
import { checkNodePty } from "../terminal/pty.js";
import { readCooldowns } from "./cooldowns.js";
import { formatInstant, onlyResting, type Assessment } from "./eligibility.js";
import { runEntry } from "./entry-run.js";
import { buildHandoff, MAX_PROMPT_SIZE, type Handoff, type RunPart } from "./handoff.js";
import { Journal, checkSessionsFolder } from "./journal.js";
import { assessProviders } from "./priority.js";
import { Notifier } from "./notify.js";
import { limitName, type NothingCanRun, type RunReport, type SessionEvent, type SessionResult } from "./result.js";
import { newSessionId } from "./session-id.js";
import { waitForReturn } from "./wait.js";
import { workspaceState } from "./workspace.js";
import type { ResumeFacts } from "./sessions.js";

export interface SessionOptions {
  provider?: string;
  ceiling?: Level;
  failover?: boolean;
  // with every entry resting, wait for the first to return instead of ending (--wait; else the config's wait)
  wait?: boolean;
  agentArgs: string[];
  now?: Date;
  // continue an earlier session: its id, the runs it had, and whether anyone had spoken
  resume?: ResumeFacts;
  // the terminal the agents are shown on and typed into (the demo plays both); the process's own by default
  terminal?: { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream };
  // aborted (with the signal's name as its reason) when the session must end: no further run starts
  stop?: AbortSignal;
  // told as the session goes, for the lines said while it runs
  onEvent?: (event: SessionEvent) => void;
}

// How long each signal of the stop ladder has to end the agent when uuldana itself crashes.
const CRASH_STEP_MS = 1000;

// The sessions of this process whose agent is running, for a crash of uuldana to end them.
const active = new Map<Journal, number>();

// Runs a session: starts the first eligible entry of the priority list, passes the terminal through to it, and
// when its allowance is gone, rests it and continues the conversation with the next eligible entry. Returns what
// happened; says nothing itself.
export async function runSession(context: Context, options: SessionOptions): Promise<SessionResult> {
  // before the journal and the choice of an entry: without node-pty no entry can run, whatever the list says
  checkNodePty();
  const sessionId = options.resume?.sessionId ?? newSessionId(options.now);
  // entries' env values (account folders, keys; of every entry the user wrote, whatever a project keeps) and what the
  // user's redact patterns match never reach a file of the session, the cooldown table or the next agent's prompt:
  // one redactor for all of them
  const redactor = redactorFor(context.config);
  const redact = (text: string): string => redactor.redact(text);
  checkSessionsFolder(context.dirs.data);
  // the session's start goes first, before anything slow (the probes of the agents), and right as the journal is
  // made: uuldana killed in its first second leaves a session that lists as interrupted, not an empty journal
  const begun = {
    uuldana: VERSION,
    cwd: context.cwd,
    ceiling: effectiveCeiling(context.config.ceiling, options.ceiling, context.config.projectCeiling),
    pid: process.pid,
    pid_start: processStarted(process.pid) ?? null,
  };
  const journal = new Journal(context.dirs.data, sessionId, redactor, { type: options.resume ? "session-resume" : "session-start", fields: begun });
  const emit = options.onEvent ?? ((): void => {});
  const failoverOn = options.failover !== false && context.config.failover;
  // a session resumed while it waited goes on waiting
  const waitOn = options.wait ?? (context.config.wait || options.resume?.waiting === true);
  let waiting = false;
  const parts: RunPart[] = [...(options.resume?.parts ?? [])];
  const runs: RunReport[] = [];
  const tried = new Set<string>();
  let spoken = options.resume?.spoken ?? false;
  let runIndex = options.resume?.parts.length ?? 0;
  // a start that failed at once, kept to end the session with when no other entry can run
  let failed: RunReport | undefined;
  // why each entry tried since the last failover could not take over, for the lines said when nothing else can run
  const failures = new Map<string, string>();
  const stopped = options.stop ?? new AbortController().signal;
  // the bell, a desktop notification and the user's notify_command at a failover, a rotation and when nothing can run
  const notifier = new Notifier({
    sessionId,
    notify: context.config.notify,
    command: context.config.notifyCommand,
    stdout: options.terminal?.stdout ?? process.stdout,
    env: context.env,
    cwd: context.cwd,
    journal,
  });
  // a failure of notify_command is said between runs, with uuldana's other lines
  const sayProblems = (): void => {
    const lines = notifier.takeProblems();
    if (lines.length) emit({ type: "notes", notes: lines });
  };
  // the run whose failover the user was told of
  let notified: RunReport | undefined;
  const finish = async (facts: Omit<SessionResult, "sessionId" | "runs">, reason?: string): Promise<SessionResult> => {
    // notify commands still running end (or are killed) before the session does, and a failure is said
    await notifier.settle();
    sayProblems();
    journal.write("session-end", { exit_code: facts.exitCode, ...(reason ? { reason } : {}) });
    return { sessionId, runs, ...facts };
  };
  try {
    for (;;) {
      const first = runs.length === 0;
      // /agent may have changed config.json during the last run: the next start walks the new order
      if (!first && existsSync(context.config.userFile)) {
        context.config = await loadConfig({ configDir: context.dirs.config, configFile: context.config.userFile, cwd: context.cwd, env: context.env });
        // a value or pattern added meanwhile is a secret from now on
        addSecrets(redactor, context.config);
      }
      const handoff: boolean = parts.length > 0 && spoken;
      const { rows, notes, ceiling, records } = await assessProviders(context, { ceiling: options.ceiling, now: options.now, handoff });
      // each run's part of the conversation leaves out its agent's own interface, as its manifest describes it
      for (const part of parts) part.chrome ??= compileLinePatterns(records.get(rows.find((row) => row.entry.key === part.entry)?.entry.id ?? "")?.manifest?.chrome ?? []);
      if (first && notes.length) emit({ type: "notes", notes });
      if (stopped.aborted) {
        const signal = String(stopped.reason) as NodeJS.Signals;
        const exitCode = 128 + signalNumber(signal);
        return await finish({ ending: "signal", exitCode, signal, nothingCanRun: undefined }, `stopped by ${signal}`);
      }
      const ordered = first ? putFirst(rows, options.provider) : rows;
      const candidates = ordered.filter((row) => !tried.has(row.entry.key));
      for (const row of candidates.filter((r) => !r.eligible)) journal.write("skipped", { entry: row.entry.key, reasons: row.reasons });
      const chosen = candidates.find((row) => row.eligible);
      if (!chosen && failed) return await finish(endOf(failed));
      if (!chosen) {
        const facts = nothingCanRun(ordered, ceiling, failures);
        // unattended: wait for the first entry that only rests to return, when that is near enough
        const returning = waitOn ? firstReturn(ordered, context.config.waitMaxHours) : undefined;
        if (returning) {
          const entry = returning.entry.key;
          const until = returning.restingUntil!;
          if (!waiting) {
            journal.write("wait", { until: until.toISOString(), entries: facts.entries });
            notifier.send("wait", { from: entry, until, text: `every entry is resting; waiting for ${entry} to return at ${formatInstant(until)}` });
          }
          emit({ type: "waiting", nothingCanRun: facts, entry, until, first: !waiting });
          waiting = true;
          await waitForReturn(context.dirs.data, until, stopped);
          continue;
        }
        const returns = facts.firstReturn ? `; the first resting entry returns at ${formatInstant(facts.firstReturn)}` : "";
        notifier.send("nothing-can-run", { from: runs.findLast((run) => run.limit?.action === "failover")?.entry, until: facts.firstReturn, text: `no entry can run${returns}` });
        return await finish({ ending: "no-entry", exitCode: 1, signal: undefined, nothingCanRun: facts, waitedTooLong: waitOn && facts.firstReturn !== undefined }, "no entry can run");
      }
      if (waiting) {
        journal.write("wait-end", { entry: chosen.entry.key });
        emit({ type: "wait-over", entry: chosen.entry.key });
        waiting = false;
      }
      // the arguments after -- may not start the first agent at another level than its banner names
      const stray = first ? strayPermissionFlag(options.agentArgs, chosen.manifest!, chosen.level!) : undefined;
      if (stray) throw strayFlagError(stray, chosen.entry.key, chosen.manifest!, chosen.level!, context.config.userFile);
      // resuming with the entry that ran last, whose CLI continues its own conversation: no prompt needed
      const native = first && options.resume && chosen.entry.key === options.resume.lastEntry ? chosen.manifest?.resume?.args : undefined;
      const prompt: Handoff | undefined =
        handoff && !native
          ? buildHandoff({
              parts,
              maxSize: MAX_PROMPT_SIZE,
              transcriptFile: join(journal.folder, `transcript-${parts.length}.txt`),
              // the saved transcript lies outside the project: pointed at only for an agent whose tools can read there
              canReadFile: chosen.manifest!.reads_outside_project === true,
              // the branch, status and size of uncommitted changes, when the user asked for them; never the diff
              workspace: context.config.handoffWorkspace ? workspaceState(context.cwd) : undefined,
              redact,
              receiver: chosen.entry.key,
            })
          : undefined;
      if (prompt) {
        journal.save(`transcript-${parts.length}.txt`, prompt.transcript + "\n");
        journal.save(`prompt-${parts.length}.txt`, prompt.prompt);
      }
      // the run whose limit this one takes over from, if any
      const previous = runs.findLast((run) => run.limit?.action === "failover");
      const { report, part } = await runEntry(context, chosen, {
        agentArgs: native ?? (first ? options.agentArgs : []),
        prompt: prompt?.prompt,
        promptFile: prompt ? join(journal.folder, `prompt-${parts.length}.txt`) : undefined,
        ceiling,
        sessionId,
        journal,
        runIndex: ++runIndex,
        start: previous ? "failover" : options.resume ? "resume" : "first",
        nativeResume: native,
        restedUntil: first ? await restedAgain(context, chosen.entry.key) : undefined,
        failover: failoverOn && rows.length >= 2,
        why: failoverOn ? "there is no other entry to move to," : "failover is off,",
        rows,
        record: records.get(chosen.entry.id)!,
        // the models every known agent offers: a limit that names one is that model's
        models: [...new Set([...records.values()].flatMap((record) => record.manifest?.models?.names ?? []))],
        redact,
        redactLines: (lines) => redactor.redactLines(lines),
        terminal: options.terminal,
        stopped,
        starting: (run) => {
          // told once per handoff, right before the line that says it, whichever entry is tried first
          if (previous && notified !== previous) {
            notified = previous;
            const reason = previous.limit!.reason;
            notifier.send(reason === "rotate" ? "rotate" : reason === "home" ? "home" : "failover", handoffFacts(previous, run));
          }
          sayProblems();
          emit({ type: "run-starting", run, previous, commandKey: context.config.commandKey });
        },
        active: (pid) => (pid === undefined ? active.delete(journal) : active.set(journal, pid)),
      });
      runs.push(report);
      tried.add(chosen.entry.key);
      sayProblems();
      if (report.end === "failed-start") {
        journal.write("start-failed", { entry: chosen.entry.key, reason: report.failure, ...(report.took === false ? { receiver: true } : {}) });
        emit({ type: "start-failed", run: report });
        failures.set(chosen.entry.key, `could not take over: ${report.failure}`);
        // one that never ran leaves nothing to end the session with; one that exited at once does, unless it was handed
        // the conversation and never took it (then no entry could carry it on)
        failed = report.exitCode === null || report.took === false ? undefined : report;
        continue;
      }
      failed = undefined;
      emit({ type: "run-ended", run: report });
      spoken ||= report.userTurns > 0 || prompt !== undefined;
      if (part) parts.push(part);
      if (report.limit?.action === "failover") {
        journal.write("handoff-from", { entry: chosen.entry.key, reason: report.limit.reason, stopped_by: report.stoppedBy ?? "exit" });
        tried.clear();
        failures.clear();
        // going home, the fallback stays a candidate: should the preferred entry not take over, the work comes back
        // (and is not sent home again: that entry no longer rests, and only an entry resting when a run starts is
        // one to go back to, so it happens once per reset)
        if (!report.limit.home) tried.add(chosen.entry.key);
        continue;
      }
      return await finish(endOf(report, stopped.aborted ? (String(stopped.reason) as NodeJS.Signals) : undefined));
    }
  } catch (error) {
    // a usage or configuration error found once the session had begun (an unknown --provider, a permission flag
    // after --) ends it in the journal too, so it does not list as interrupted
    if (error instanceof UuldanaError) journal.write("session-end", { exit_code: error.exitCode, reason: error.message });
    throw error;
  } finally {
    active.delete(journal);
    journal.close();
  }
}

// uuldana itself has crashed: each running agent climbs the stop ladder in a bounded synchronous wait (about two
// seconds at most, then KILL), and its session ends in the journal. For the CLI's last handler; never throws.
export function endSessionsOnCrash(error: unknown): void {
  for (const [journal, pid] of active) {
    const step = stopGroupNow(pid, CRASH_STEP_MS);
    try {
      const message = error instanceof Error ? error.message : String(error);
      journal.write("session-end", { exit_code: 70, reason: `uuldana crashed: ${message}; its agent ${step === "exited" ? "had exited" : `was stopped with ${step}`}` });
    } catch {
      // the journal is as good as the crash left it
    }
  }
  active.clear();
}

// --- internal ---

// How the session ends after its last run: the agent's own exit code, or a signal's.
function endOf(run: RunReport, signal?: NodeJS.Signals): Omit<SessionResult, "sessionId" | "runs"> {
  if (signal) return { ending: "signal", exitCode: 128 + signalNumber(signal), signal, nothingCanRun: undefined };
  const exitCode = run.signal ? 128 + run.signal : (run.exitCode ?? 1);
  return { ending: "agent-exited", exitCode, signal: undefined, nothingCanRun: undefined };
}

// What the user is told when the session moves from one entry to the next at a limit, or before one.
function handoffFacts(from: RunReport, to: RunReport): { from: string; to: string; until: Date; text: string } {
  const limit = from.limit!;
  if (limit.reason === "home") return { from: from.entry, to: to.entry, until: new Date(limit.home!.until), text: `${limit.text}; ${from.entry} hands the work back to ${to.entry}` };
  const why =
    limit.reason === "rotate"
      ? `${from.entry} was rotated before its allowance ran out`
      : limit.reason === "shared-rest"
        ? `${from.entry} was rested by another uuldana session`
        : `${from.entry}'s ${limitName(limit)} is gone`;
  return { from: from.entry, to: to.entry, until: limit.restsUntil, text: `${why}; continuing with ${to.entry}` };
}

// When an entry's rest ended, if the cooldown table still remembers one that is over.
async function restedAgain(context: Context, key: string): Promise<Date | undefined> {
  const row = (await readCooldowns(context.dirs.data)).entries.get(key);
  return row && row.until.getTime() <= Date.now() ? row.until : undefined;
}

// The entry that only rests (nothing else keeps it from running) and returns first, if that is within maxHours.
function firstReturn(rows: Assessment[], maxHours: number): Assessment | undefined {
  const returning = rows.filter(onlyResting).sort((a, b) => a.restingUntil!.getTime() - b.restingUntil!.getTime())[0];
  return returning && returning.restingUntil!.getTime() - Date.now() <= maxHours * 3_600_000 ? returning : undefined;
}

function putFirst(rows: Assessment[], key: string | undefined): Assessment[] {
  if (!key) return rows;
  const index = rows.findIndex((row) => row.entry.key === key);
  if (index === -1) {
    throw new UuldanaError("E_USAGE", `--provider ${key}: no entry has this key`, {
      details: [`  entries: ${rows.map((row) => row.entry.key).join(", ") || "none"}`],
      hint: 'run "uuldana providers list --all" to see every entry and provider',
    });
  }
  return [rows[index]!, ...rows.slice(0, index), ...rows.slice(index + 1)];
}

function nothingCanRun(rows: Assessment[], ceiling: Level, failures: ReadonlyMap<string, string>): NothingCanRun {
  const firstReturn = rows
    .map((row) => row.restingUntil)
    .filter((until): until is Date => until !== undefined)
    .sort((a, b) => a.getTime() - b.getTime())[0];
  const reasons = (row: Assessment): string[] => (row.reasons.length ? row.reasons : [failures.get(row.entry.key)].filter((reason) => reason !== undefined));
  return { ceiling, entries: rows.map((row) => ({ entry: row.entry.key, reasons: reasons(row) })), firstReturn };
}
