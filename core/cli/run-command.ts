import { existsSync } from "node:fs";
import { basename, join } from "node:path";

import { changeOrder, type OrderChange } from "../config/agent-order.js";
import { loadConfig } from "../config/config.js";
import type { Context } from "../config/context.js";
import { readCooldowns, updateCooldowns } from "../session/cooldowns.js";
import { describeIgnored, type DetectorEvent } from "../reader/detector.js";
import { formatInstant, type Assessment } from "../session/eligibility.js";
import { UuldanaError, formatInternalError } from "../base/errors.js";
import { buildHandoff, MAX_PROMPT_CHARS, type Handoff, type RunPart } from "../session/handoff.js";
import { restoreTerminal, startRun, type Run, type RunResult } from "../host/host.js";
import { Journal, checkSessionsFolder } from "../session/journal.js";
import { effectiveCeiling, type Level } from "../config/levels.js";
import { strayFlagError, strayPermissionFlag } from "../registry/permission-flags.js";
import { compilePhrase } from "../reader/phrases.js";
import { assessProviders } from "./providers-command.js";
import { checkNodePty } from "../terminal/pty.js";
import { classifyText } from "../reader/reader.js";
import { addSecrets, redactorFor } from "../config/redaction.js";
import { result, type CommandResult } from "./result.js";
import { escapeControls, safeOutput } from "../base/safe-text.js";
import { newSessionId } from "../session/session-id.js";
import { stopGroupNow } from "../host/stop.js";
import { STOP_SIGNALS, processStarted, signalNumber } from "../base/process.js";
import { formatDuration } from "../base/time.js";
import type { Manifest } from "../registry/types.js";

export interface RunOptions {
  provider?: string;
  ceiling?: Level;
  failover?: boolean;
  agentArgs: string[];
  now?: Date;
  // continue an earlier session: its id, the runs it had, and whether anyone had spoken
  resume?: { sessionId: string; parts: RunPart[]; spoken: boolean; lastEntry: string | undefined };
  // the terminal the agents are shown on and typed into (the demo plays both); the process's own by default
  terminal?: { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream };
  // said before each run starts, and when it has ended
  say?: (line: string) => void;
  // aborted (with the signal's name as its reason) when the session must end: no further run starts
  stop?: AbortSignal;
}

type LimitEvent = Extract<DetectorEvent, { type: "stop" }>;

// A start that fails this soon with a failing status counts as "could not start": the next entry is tried.
const FAILED_START_MS = 3000;
// How long each signal of the stop ladder has to end the agent when uuldana itself crashes.
const CRASH_STEP_MS = 1000;

// uuldana run: starts the first eligible entry of the priority list, passes the terminal through to it, and when
// its allowance is gone, rests it and continues the conversation with the next eligible entry.
export async function runCommand(context: Context, options: RunOptions): Promise<CommandResult> {
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
    cwd: context.cwd,
    ceiling: effectiveCeiling(context.config.ceiling, options.ceiling, context.config.projectCeiling),
    pid: process.pid,
    pid_start: processStarted(process.pid) ?? null,
  };
  const journal = new Journal(context.dirs.data, sessionId, redactor);
  journal.write(options.resume ? "session-resume" : "session-start", begun);
  const failoverOn = options.failover !== false && context.config.failover;
  const parts: RunPart[] = [...(options.resume?.parts ?? [])];
  const tried = new Set<string>();
  let spoken = options.resume?.spoken ?? false;
  let runs = options.resume?.parts.length ?? 0;
  let first = true;
  // what ended the previous run, for the line that starts the next
  let previous: string | undefined;
  // a start that failed at once, kept to end the session with when no other entry can run
  let failed: Extract<RunOutcome, { kind: "ended" }> | undefined;
  // uuldana's own lines quote ids, names, versions and notes from files and programs: made safe before they are said
  const sink = options.say ?? ((line: string): void => void process.stderr.write(`${line}\n`));
  const say = (line: string): void => sink(safeOutput(line));
  // a signal between runs (or one the caller saw first) ends the session before another run starts; during a run,
  // the run's own handlers also stop its agent gracefully
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => stop.abort(signal);
  const follow = (): void => stop.abort(options.stop?.reason);
  if (options.stop?.aborted) follow();
  options.stop?.addEventListener("abort", follow);
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  try {
    for (;;) {
      // /agent may have changed config.json during the last run: the next start walks the new order
      if (!first && existsSync(context.config.userFile)) {
        context.config = await loadConfig({ configDir: context.dirs.config, configFile: context.config.userFile, cwd: context.cwd, env: context.env });
        // a value or pattern added meanwhile is a secret from now on
        addSecrets(redactor, context.config);
      }
      const handoff: boolean = parts.length > 0 && spoken;
      const { rows, notes, ceiling } = await assessProviders(context, { ceiling: options.ceiling, now: options.now, handoff });
      if (first) for (const note of notes) say(note);
      if (stop.signal.aborted) {
        const signal = String(stop.signal.reason) as NodeJS.Signals;
        journal.write("session-end", { exit_code: 128 + signalNumber(signal), reason: `stopped by ${signal}` });
        return result("", `uuldana: stopped by ${signal}${previous ? ` (${previous})` : ""}\n`, 128 + signalNumber(signal));
      }
      const ordered = first ? putFirst(rows, options.provider) : rows;
      const candidates = ordered.filter((row) => !tried.has(row.entry.key));
      for (const row of candidates.filter((r) => !r.eligible)) journal.write("skipped", { entry: row.entry.key, reasons: row.reasons });
      const chosen = candidates.find((row) => row.eligible);
      if (!chosen && failed) return endSession(journal, failed);
      if (!chosen) {
        const message = (previous ? `uuldana: ${previous}.\n` : "") + nothingCanRun(ordered, ceiling, new Date());
        journal.write("session-end", { exit_code: 1, reason: "no entry can run" });
        return result("", message, 1);
      }
      // the arguments after -- may not start the first agent at another level than its banner names
      const stray = first ? strayPermissionFlag(options.agentArgs, chosen.manifest!, chosen.level!) : undefined;
      if (stray) throw strayFlagError(stray, chosen.entry.key, chosen.manifest!, chosen.level!, context.config.userFile);
      // resuming with the entry that ran last, whose CLI continues its own conversation: no prompt needed
      const native = first && options.resume && chosen.entry.key === options.resume.lastEntry ? chosen.manifest?.resume?.args : undefined;
      const prompt: Handoff | undefined = handoff && !native ? buildHandoff({ parts, maxChars: MAX_PROMPT_CHARS, transcriptFile: join(journal.folder, `transcript-${parts.length}.txt`), redact }) : undefined;
      if (prompt) {
        journal.save(`transcript-${parts.length}.txt`, prompt.transcript + "\n");
        journal.save(`prompt-${parts.length}.txt`, prompt.prompt);
      }
      const outcome = await runEntry(context, chosen, {
        agentArgs: native ?? (first ? options.agentArgs : []),
        prompt: prompt?.prompt,
        promptFile: prompt ? join(journal.folder, `prompt-${parts.length}.txt`) : undefined,
        ceiling,
        sessionId,
        journal,
        runIndex: ++runs,
        previous: native ? `resuming ${chosen.entry.key}'s own conversation (${native.join(" ")})` : previous,
        rested: first ? await restedAgain(context, chosen.entry.key) : undefined,
        failover: failoverOn && rows.length >= 2,
        why: failoverOn ? "there is no other entry to move to," : "failover is off,",
        rows,
        say,
        redact,
        terminal: options.terminal,
        stopped: stop.signal,
      });
      first = false;
      tried.add(chosen.entry.key);
      if (outcome.kind === "failed-start") {
        journal.write("start-failed", { entry: chosen.entry.key, reason: outcome.reason });
        say(`uuldana: ${chosen.entry.key} could not start (${outcome.reason})`);
        failed = outcome.ended;
        continue;
      }
      failed = undefined;
      const { result: ended, limit } = outcome;
      spoken ||= ended.userTurns.length > 0 || prompt !== undefined;
      parts.push({ entry: chosen.entry.key, name: chosen.manifest!.name, conversation: ended.conversation, stopText: limit?.text, prompt: prompt?.prompt });
      // a signal to uuldana means the user wants to stop, even if a limit came first
      if (limit && !outcome.signal && failoverOn && rows.length >= 2) {
        const until = restUntil(limit, context.config.cooldownMinutes);
        previous = `${chosen.entry.key}'s ${limitName(limit)} is gone; it rests until ${formatInstant(until)}`;
        journal.write("handoff-from", { entry: chosen.entry.key, stopped_by: ended.stop?.step ?? "exit" });
        tried.clear();
        tried.add(chosen.entry.key);
        continue;
      }
      return endSession(journal, outcome);
    }
  } catch (error) {
    // a usage or configuration error found once the session had begun (an unknown --provider, a permission flag
    // after --) ends it in the journal too, so it does not list as interrupted
    if (error instanceof UuldanaError) journal.write("session-end", { exit_code: error.exitCode, reason: error.message });
    throw error;
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
    options.stop?.removeEventListener("abort", follow);
    journal.close();
  }
}

function endSession(journal: Journal, outcome: Extract<RunOutcome, { kind: "ended" }>): CommandResult {
  const { result: ended } = outcome;
  const ending = describeEnding(outcome.entry, outcome.manifest, ended);
  const code = outcome.signal ? 128 + signalNumber(outcome.signal) : ended.signal ? 128 + ended.signal : ended.exitCode;
  journal.write("session-end", { exit_code: code });
  return result("", [...outcome.notices, ending].join("\n") + "\n", code);
}

// --- internal ---

interface RunEntryOptions {
  agentArgs: string[];
  prompt: string | undefined;
  promptFile: string | undefined;
  ceiling: Level;
  sessionId: string;
  journal: Journal;
  // the run's number in the session, for its files
  runIndex: number;
  // what ended the previous run, said in the line that starts this one
  previous: string | undefined;
  // when this entry's rest ended, if it rested before and runs again now
  rested: Date | undefined;
  failover: boolean;
  // why the agent is left running after a limit, when failover cannot happen
  why: string;
  rows: Assessment[];
  say: (line: string) => void;
  // the session's redactor, for what leaves the journal's hands (the cooldown row)
  redact: (text: string) => string;
  terminal: RunOptions["terminal"];
  // aborted when the session must end; a run that starts just after is stopped at once
  stopped: AbortSignal;
}

interface Ended {
  kind: "ended";
  entry: string;
  manifest: Manifest;
  result: RunResult;
  limit: LimitEvent | undefined;
  signal: NodeJS.Signals | undefined;
  notices: string[];
}

type RunOutcome = Ended | { kind: "failed-start"; reason: string; ended: Ended | undefined };

// One run of one entry: started with its level's flags (and the handoff prompt), watched for a gone allowance.
async function runEntry(context: Context, chosen: Assessment, options: RunEntryOptions): Promise<RunOutcome> {
  const manifest = chosen.manifest!;
  const flags = manifest.levels![chosen.level!]!;
  const args = [...(manifest.args ?? []), ...(flags.args ?? []), ...chosen.entry.args, ...options.agentArgs];
  const promptMode = manifest.prompt?.mode ?? "none";
  if (options.prompt && promptMode === "argv") args.push(options.prompt);
  if (options.prompt && promptMode === "flag") args.push(manifest.prompt!.flag!, options.prompt);
  // the level's environment comes last: an entry's env may not loosen what the level enforces
  const env = { ...stringEnv(process.env), ...chosen.entry.env, ...(flags.env ?? {}) };
  const phrases = (manifest.limit_phrases ?? []).map(compilePhrase);
  const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const notices: string[] = [];
  // one line each in uuldana's prompt: a key from a project's config may not break its line
  const resting = options.rows.filter((row) => row.restingUntil).map((row) => `${escapeControls(row.entry.key)} until ${formatInstant(row.restingUntil!)}`);
  const conversationFile = `conversation-${options.runIndex}.txt`;
  const shownArgs = args.map((arg) => (arg === options.prompt ? `<prompt: ${options.promptFile}>` : arg));
  const runStart = {
    entry: chosen.entry.key,
    provider: chosen.entry.id,
    version: chosen.detection?.version ?? null,
    level: chosen.level,
    argv: [chosen.detection!.path, ...shownArgs],
    ...(options.promptFile ? { prompt_file: basename(options.promptFile) } : {}),
  };
  const starting = `${chosen.entry.key} (${manifest.name} ${chosen.detection?.version ?? ""}) at ${chosen.level}${options.prompt ? " with the conversation so far" : ""}`;
  const opening = options.previous
    ? `${options.previous}; ${options.previous.startsWith("resuming") ? "starting" : "continuing with"} ${starting}`
    : options.rested
      ? `${chosen.entry.key} has rested (its allowance returned at ${formatInstant(options.rested)}); starting it again: ${starting}`
      : `starting ${starting}`;
  options.say(`uuldana: ${opening} · ${context.config.commandKey} opens uuldana's prompt`);
  let limit: LimitEvent | undefined;
  let stopping: Promise<unknown> | undefined;
  let cooldownWritten: Promise<unknown> | undefined;
  let cooldownNotice: string | undefined;
  let run: Run;
  try {
    run = startRun({
      file: chosen.detection!.path!,
      args,
      env,
      cwd: context.cwd,
      entry: chosen.entry.key,
      level: chosen.level!,
      exit: manifest.exit,
      commandKey: context.config.commandKey,
      scrollback: context.config.scrollback,
      ...options.terminal,
      ...(options.prompt ? { firstPrompt: options.prompt } : {}),
      ...(options.prompt && promptMode === "typed" ? { typedPrompt: { text: options.prompt, ready: new RegExp(manifest.prompt!.ready!, "m") } } : {}),
      detect: {
        quietSeconds: context.config.quietSeconds,
        dismissSeconds: context.config.dismissSeconds,
        classify: (text) => classifyText(text, { now: new Date(), timeZone, phrases }),
      },
      onUserTurn: (text) => {
        options.journal.write("user", { entry: chosen.entry.key, text });
        // the conversation so far is kept current at each turn, in a file of its own
        void run.screen.read({ conversation: true }).then(({ conversation }) => {
          if (conversation) options.journal.save(conversationFile, conversation + "\n");
        });
      },
      onDetection: (event) => {
        if (event.type === "dismissed") {
          notices.push(`uuldana: ${describeIgnored(event)}`);
          options.journal.write("ignored", { entry: chosen.entry.key, text: event.text, score: event.verdict.score });
        }
        if (event.type === "stop") {
          limit = event;
          const until = restUntil(event, context.config.cooldownMinutes);
          options.journal.write("limit", { entry: chosen.entry.key, source: "inferred", text: event.text, score: event.verdict.score, kind: event.verdict.kind, reset_at: event.verdict.reset_at, after: event.after });
          // waits at most a second for another writer; a rest not written then is kept and written later
          cooldownWritten = updateCooldowns(context.dirs.data, (entries) => {
            entries.set(chosen.entry.key, { until, since: new Date(), source: "inferred", kind: event.verdict.kind, text: options.redact(event.text) });
          }).then((write) => {
            options.journal.write("cooldown", { entry: chosen.entry.key, until: until.toISOString(), ...(write.written ? {} : { written: false }), ...(write.notice ? { notice: write.notice } : {}) });
            if (write.notice) cooldownNotice = `uuldana: ${write.written ? "" : `${chosen.entry.key}'s rest until ${formatInstant(until)} is not in the cooldown table yet: `}${write.notice}`;
          });
          if (options.failover) stopping = run.stop();
          else notices.push(`uuldana: ${chosen.entry.key} said its usage allowance is gone (${limitName(event)}; rests until ${formatInstant(until)}); ${options.why} so it keeps running`);
        }
      },
      describe: {
        header: () => [`session ${options.sessionId} · ceiling ${options.ceiling}`, `resting: ${resting.length ? resting.join(", ") : "none"}`],
        status: () => [`session ${options.sessionId}`, `ceiling ${options.ceiling}; resting: ${resting.length ? resting.join(", ") : "none"}`],
        agent: (args) => {
          const [verb, key] = args.split(/\s+/);
          if (!verb) {
            return [
              "priority list:",
              ...options.rows.map((row) => `  ${row.order}. ${escapeControls(row.entry.key)}: ${row.eligible ? `ready at ${row.level}` : row.reasons.join("; ")}`),
              "change it: /agent up|down|first|remove ENTRY, or /agent add PROVIDER",
            ];
          }
          if (!["up", "down", "first", "add", "remove"].includes(verb) || !key) return ["usage: /agent [up|down|first|remove ENTRY | add PROVIDER]"];
          return [escapeControls(changeOrder(context.config.userFile, verb as OrderChange, key)), "the next failover walks this order"];
        },
      },
    });
  } catch (error) {
    if (error instanceof UuldanaError && error.code === "E_AGENT_START") {
      options.journal.write("run-start", runStart);
      return { kind: "failed-start", reason: error.message, ended: undefined };
    }
    throw error;
  }
  // the session told to stop (SIGTERM, SIGHUP or SIGINT to uuldana) stops the agent the graceful way, even when
  // the signal came just before this run started; a crash of uuldana cannot wait for that, so it climbs the same
  // ladder of signals in a bounded synchronous wait (about two seconds at most, then KILL) before it exits
  const stopRun = (): void => void run.stop();
  const onCrash = (error: Error): void => {
    restoreTerminal();
    process.stderr.write(safeOutput(formatInternalError(error)));
    const step = stopGroupNow(run.agent.pid, CRASH_STEP_MS);
    try {
      options.journal.write("session-end", { exit_code: 70, reason: `uuldana crashed: ${error.message}; its agent ${step === "exited" ? "had exited" : `was stopped with ${step}`}` });
    } catch {
      // the journal is as good as the crash left it
    }
    process.exit(70);
  };
  options.stopped.addEventListener("abort", stopRun);
  if (options.stopped.aborted) stopRun();
  process.on("uncaughtException", onCrash);
  let ended: RunResult;
  try {
    // the agent's pid, and when it began (a reused pid began later): a later command can tell that it still runs.
    // Written once the crash handler stands, so a journal that cannot be written (a full disk) stops the agent too
    options.journal.write("run-start", { ...runStart, pid: run.agent.pid, pid_start: processStarted(run.agent.pid) ?? null });
    ended = await run.result;
    await stopping;
    await cooldownWritten;
  } finally {
    options.stopped.removeEventListener("abort", stopRun);
    process.off("uncaughtException", onCrash);
    restoreTerminal();
  }
  if (cooldownNotice) options.say(cooldownNotice);
  options.journal.save(conversationFile, ended.conversation + "\n");
  options.journal.write("conversation", { entry: chosen.entry.key, name: manifest.name, file: conversationFile });
  options.journal.write("run-end", { entry: chosen.entry.key, exit_code: ended.exitCode, signal: ended.signal ?? null, stopped_by: ended.stop?.step ?? null, user_turns: ended.userTurns.length });
  const receivedSignal = options.stopped.aborted ? (String(options.stopped.reason) as NodeJS.Signals) : undefined;
  const outcome: Ended = { kind: "ended", entry: chosen.entry.key, manifest, result: ended, limit: options.failover ? limit : undefined, signal: receivedSignal, notices };
  if (!limit && !receivedSignal && ended.exitCode !== 0 && ended.durationMs < FAILED_START_MS && !ended.typed) {
    return { kind: "failed-start", reason: `it exited with status ${ended.exitCode} at once`, ended: outcome };
  }
  return outcome;
}

// When an entry's rest ended, if the cooldown table still remembers one that is over.
async function restedAgain(context: Context, key: string): Promise<Date | undefined> {
  const row = (await readCooldowns(context.dirs.data)).entries.get(key);
  return row && row.until.getTime() <= Date.now() ? row.until : undefined;
}

function restUntil(limit: LimitEvent, cooldownMinutes: number): Date {
  const reset = limit.verdict.reset_at ? new Date(limit.verdict.reset_at) : undefined;
  return reset && reset.getTime() > Date.now() ? reset : new Date(Date.now() + cooldownMinutes * 60_000);
}

function limitName(limit: LimitEvent): string {
  return limit.verdict.kind === "unknown" ? "usage allowance" : `${limit.verdict.kind} limit`;
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

// One line per entry saying why it cannot run, and when the first resting one returns.
function nothingCanRun(rows: Assessment[], ceiling: Level, now: Date): string {
  if (rows.length === 0) return "uuldana: no entry can run: no provider is listed in config.json and none is installed\n";
  const lines = [`uuldana: no entry can run under the ceiling ${ceiling}:`];
  for (const row of rows) lines.push(`  ${escapeControls(row.entry.key)}: ${row.reasons.join("; ") || "already tried in this session"}`);
  const returns = rows
    .map((row) => row.restingUntil)
    .filter((until): until is Date => until !== undefined)
    .sort((a, b) => a.getTime() - b.getTime())[0];
  if (returns) {
    const minutes = Math.max(1, Math.ceil((returns.getTime() - now.getTime()) / 60_000));
    lines.push(`The first resting entry returns in ${minutes} minute${minutes === 1 ? "" : "s"} (${formatInstant(returns)}).`);
  }
  return lines.join("\n") + "\n";
}

function describeEnding(entry: string, manifest: Manifest, outcome: RunResult): string {
  const after = formatDuration(outcome.durationMs);
  if (outcome.stop && outcome.stop.step !== "exited") {
    const how = outcome.stop.step === "keys" ? `its exit keys` : outcome.stop.step;
    return `uuldana: stopped ${entry} (${manifest.name}) with ${how} after ${after}`;
  }
  if (outcome.signal) return `uuldana: ${entry} (${manifest.name}) was killed by signal ${outcome.signal} after ${after}`;
  return `uuldana: ${entry} (${manifest.name}) exited with code ${outcome.exitCode} after ${after}`;
}

function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) result[key] = value;
  return result;
}
