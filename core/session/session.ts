import { existsSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

import { closestWord } from "../base/suggest.js";
import { UuldanaError } from "../base/errors.js";
import { processStarted, signalNumber } from "../base/process.js";
import { VERSION } from "../base/version.js";
import { addSecrets, redactorFor, type Redactor } from "../config/redaction.js";
import { accountOf, entriesOfAccount, loadConfig } from "../config/config.js";
import type { Context } from "../config/context.js";
import { ceilingInForce, type CeilingInForce, type Level } from "../config/levels.js";
import { stopGroupNow } from "../host/stop.js";
import { compileLinePatterns } from "../registry/patterns.js";
import { notSignedInReason } from "../registry/sign-in.js";
import type { ManifestRecord } from "../registry/types.js";
import { strayFlagError, strayPermissionFlag } from "../registry/permission-flags.js";
import { checkNodePty } from "../terminal/pty.js";
import { readCooldowns } from "./cooldowns.js";
import { formatInstant, onlyResting, type Assessment } from "./eligibility.js";
import { runEntry } from "./entry-run.js";
import type { RunSettings } from "./run-options.js";
import { screenGate } from "./screen-gate.js";
import { buildHandoff, MAX_PROMPT_SIZE, type Handoff, type RunPart } from "./handoff.js";
import { Journal, checkSessionsFolder } from "./journal.js";
import { keepAccountsApart } from "./account-moves.js";
import { assessProviders } from "./priority.js";
import { Notifier } from "./notify.js";
import { limitName, type NothingCanRun, type RunReport, type SessionEvent, type SessionResult } from "./result.js";
import { newSessionId } from "./session-id.js";
import type { SharedRests } from "./shared-rests.js";
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
// the notifiers of the sessions running, whose notify commands a crash must not leave behind
const notifiers = new Set<Notifier>();

// Runs a session: starts the first eligible entry of the priority list, passes the terminal through to it, and
// when its allowance is gone, rests it and continues the conversation with the next eligible entry. Returns what
// happened; says nothing itself.
export async function runSession(context: Context, options: SessionOptions): Promise<SessionResult> {
  // before the journal and the choice of an entry: without node-pty no entry can run, whatever the list says
  checkNodePty();
  const session = new SessionLoop(context, options);
  try {
    for (;;) {
      const ended = await session.step();
      if (ended) return ended;
    }
  } catch (error) {
    // a usage or configuration error found once the session had begun (an unknown --provider, a permission flag
    // after --) ends it in the journal too, so it does not list as interrupted
    if (error instanceof UuldanaError) session.journal.write("session-end", { exit_code: error.exitCode, reason: error.message });
    throw error;
  } finally {
    // whatever a notify_command started and left running ends with the session, however it ends; so does the store's connection
    session.close();
    active.delete(session.journal);
    session.journal.close();
  }
}

// One session's walk down the priority list: each step starts one entry (or waits, or ends the session).
class SessionLoop {
  readonly journal: Journal;
  private readonly sessionId: string;
  private readonly redactor: Redactor;
  private readonly notifier: Notifier;
  private readonly emit: (event: SessionEvent) => void;
  private readonly failoverOn: boolean;
  // a session resumed while it waited goes on waiting
  private readonly waitOn: boolean;
  private readonly stopped: AbortSignal;
  private waiting = false;
  private readonly parts: RunPart[];
  private readonly runs: RunReport[] = [];
  private readonly tried = new Set<string>();
  private spoken: boolean;
  private runIndex: number;
  // a start that failed at once, kept to end the session with when no other entry can run
  private failed: RunReport | undefined;
  // why each entry tried since the last failover could not take over, for the lines said when nothing else can run
  private readonly failures = new Map<string, string>();
  // entries left at a sign-in screen in this session: not tried again, with the reason
  private readonly needsSignIn = new Map<string, string>();
  // entries already said to be skipped because they are not signed in
  private readonly toldNotSignedIn = new Set<string>();
  // the run whose failover the user was told of
  private notified: RunReport | undefined;
  // the shared rest store (shared_rests), opened at the first step; and what it has to say, said between runs
  private shared: SharedRests | undefined;
  private readonly storeNotices: string[] = [];

  constructor(private readonly context: Context, private readonly options: SessionOptions) {
    this.sessionId = options.resume?.sessionId ?? newSessionId(options.now);
    // entries' env values (account folders, keys; of every entry the user wrote, whatever a project keeps) and what the
    // user's redact patterns match never reach a file of the session, the cooldown table or the next agent's prompt:
    // one redactor for all of them
    this.redactor = redactorFor(context.config);
    checkSessionsFolder(context.dirs.data);
    // the session's start goes first, before anything slow (the probes of the agents), and right as the journal is
    // made: uuldana killed in its first second leaves a session that lists as interrupted, not an empty journal
    const begun = {
      uuldana: VERSION,
      cwd: context.cwd,
      ...ceilingFields(ceilingInForce(context.config, options.ceiling)),
      pid: process.pid,
      pid_start: processStarted(process.pid) ?? null,
    };
    this.journal = new Journal(context.dirs.data, this.sessionId, this.redactor, { type: options.resume ? "session-resume" : "session-start", fields: begun });
    this.emit = options.onEvent ?? ((): void => {});
    this.failoverOn = options.failover !== false && context.config.failover;
    this.waitOn = options.wait ?? (context.config.wait || options.resume?.waiting === true);
    this.parts = [...(options.resume?.parts ?? [])];
    this.spoken = options.resume?.spoken ?? false;
    this.runIndex = options.resume?.parts.length ?? 0;
    this.stopped = options.stop ?? new AbortController().signal;
    // the bell, a desktop notification and the user's notify_command at a failover, a rotation and when nothing can run
    const config = context.config;
    const stdout = options.terminal?.stdout ?? process.stdout;
    this.notifier = new Notifier({ sessionId: this.sessionId, notify: config.notify, command: config.notifyCommand, stdout, env: context.env, cwd: context.cwd, journal: this.journal });
    notifiers.add(this.notifier);
  }

  // One step: the next entry runs, the session waits for one, or it ends (its result).
  async step(): Promise<SessionResult | undefined> {
    const first = this.runs.length === 0;
    await this.reloadConfig(first);
    if (first && this.context.config.sharedRests) this.shared = await this.openShared();
    const handoff: boolean = this.parts.length > 0 && this.spoken;
    const { rows, notes, ceiling, ceilingFrom, records } = await assessProviders(this.context, { ceiling: this.options.ceiling, now: this.options.now, handoff });
    // a move uuldana makes by itself never goes to another account of a provider whose terms forbid that
    if (!first) keepAccountsApart(rows, this.runs.at(-1));
    // each run's part of the conversation leaves out its agent's own interface, as its manifest describes it
    for (const part of this.parts) part.chrome ??= compileLinePatterns(records.get(rows.find((row) => row.entry.key === part.entry)?.entry.id ?? "")?.manifest?.chrome ?? []);
    if (first && notes.length) this.emit({ type: "notes", notes });
    if (this.stopped.aborted) {
      const signal = String(this.stopped.reason) as NodeJS.Signals;
      return await this.finish({ ending: "signal", exitCode: 128 + signalNumber(signal), signal, nothingCanRun: undefined }, `stopped by ${signal}`);
    }
    const ordered = first ? putFirst(rows, this.options.provider) : rows;
    const chosen = this.choose(ordered);
    if (!chosen) return await this.noEntry(ordered, ceiling);
    const passedOver = this.notSignedIn(ordered, chosen);
    if (passedOver.length) this.emit({ type: "notes", notes: passedOver });
    if (this.waiting) {
      this.journal.write("wait-end", { entry: chosen.entry.key });
      this.emit({ type: "wait-over", entry: chosen.entry.key });
      this.waiting = false;
    }
    const report = await this.start(chosen, { first, handoff, rows, ceiling, ceilingFrom, records });
    return await this.afterRun(chosen, report);
  }

  // /agent may have changed config.json during the last run: the next start walks the new order.
  private async reloadConfig(first: boolean): Promise<void> {
    const context = this.context;
    if (first || !existsSync(context.config.userFile)) return;
    context.config = await loadConfig({ configDir: context.dirs.config, configFile: context.config.userFile, cwd: context.cwd, env: context.env });
    // a value or pattern added meanwhile is a secret from now on
    addSecrets(this.redactor, context.config);
  }

  // The first eligible entry not tried since the last failover and not left at a sign-in screen; the others are
  // journaled as skipped, with their reasons.
  private choose(ordered: Assessment[]): Assessment | undefined {
    const candidates = ordered.filter((row) => !this.tried.has(row.entry.key));
    for (const row of candidates) {
      const signIn = this.needsSignIn.get(row.entry.key);
      if (!row.eligible) this.journal.write("skipped", { entry: row.entry.key, reasons: row.reasons });
      else if (signIn) this.journal.write("skipped", { entry: row.entry.key, reasons: [signIn] });
    }
    return candidates.find((row) => row.eligible && !this.needsSignIn.has(row.entry.key));
  }

  // The entries ahead of the chosen one that are skipped because they are not signed in, each said once a session
  // with the command that signs it in: the user can act on it, as on nothing else a start skips.
  private notSignedIn(ordered: Assessment[], chosen: Assessment): string[] {
    const lines: string[] = [];
    for (const row of ordered.slice(0, ordered.indexOf(chosen))) {
      const reason = row.manifest && notSignedInReason(row.manifest);
      if (!reason || !row.reasons.includes(reason) || this.toldNotSignedIn.has(row.entry.key)) continue;
      this.toldNotSignedIn.add(row.entry.key);
      lines.push(`uuldana: skipping ${row.entry.key}: ${reason}`);
    }
    return lines;
  }

  // No entry can run now: the session waits for the first that only rests (--wait), or ends.
  private async noEntry(ordered: Assessment[], ceiling: Level): Promise<SessionResult | undefined> {
    if (this.failed) return await this.finish(endOf(this.failed));
    const facts = nothingCanRun(ordered, ceiling, this.failures, this.needsSignIn);
    // unattended: wait for the first entry that only rests to return, when that is near enough
    const returning = this.waitOn ? firstReturn(ordered, this.context.config.waitMaxHours) : undefined;
    if (returning) {
      const entry = returning.entry.key;
      const until = returning.restingUntil!;
      if (!this.waiting) {
        this.journal.write("wait", { until: until.toISOString(), entries: facts.entries });
        this.notifier.send("wait", { from: entry, until, text: `every entry is resting; waiting for ${entry} to return at ${formatInstant(until)}` });
      }
      this.emit({ type: "waiting", nothingCanRun: facts, entry, until, first: !this.waiting });
      this.waiting = true;
      await waitForReturn(this.context.dirs.data, until, this.stopped);
      return undefined;
    }
    const returns = facts.firstReturn ? `; the first resting entry returns at ${formatInstant(facts.firstReturn)}` : "";
    this.notifier.send("nothing-can-run", { from: this.runs.findLast((run) => run.limit?.action === "failover")?.entry, until: facts.firstReturn, text: `no entry can run${returns}` });
    return await this.finish({ ending: "no-entry", exitCode: 1, signal: undefined, nothingCanRun: facts, waitedTooLong: this.waitOn && facts.firstReturn !== undefined }, "no entry can run");
  }

  // Starts the chosen entry, with the conversation so far when there is one to hand on, and follows it to its end.
  private async start(chosen: Assessment, step: StepFacts): Promise<RunReport> {
    const { context, options } = this;
    // the arguments after -- may not start the first agent at another level than its banner names
    const stray = step.first ? strayPermissionFlag(options.agentArgs, chosen.manifest!, chosen.level!) : undefined;
    if (stray) throw strayFlagError(stray, chosen.entry.key, chosen.manifest!, chosen.level!, context.config.userFile);
    // resuming with the entry that ran last, whose CLI continues its own conversation: no prompt needed
    const native = step.first && options.resume && chosen.entry.key === options.resume.lastEntry ? chosen.manifest?.resume?.args : undefined;
    const prompt = step.handoff && !native ? this.handoff(chosen) : undefined;
    // the run whose limit this one takes over from, if any
    const previous = this.runs.findLast((run) => run.limit?.action === "failover");
    const { report, part } = await runEntry({ ...runSettings(context, this.waitOn), shared: this.shared }, {
      chosen,
      agentArgs: native ?? (step.first ? options.agentArgs : []),
      prompt: prompt?.prompt,
      promptFile: prompt ? join(this.journal.folder, `prompt-${this.parts.length}.txt`) : undefined,
      ceiling: step.ceiling,
      ceilingFrom: step.ceilingFrom,
      sessionId: this.sessionId,
      journal: this.journal,
      runIndex: ++this.runIndex,
      start: previous ? "failover" : options.resume ? "resume" : "first",
      nativeResume: native,
      restedUntil: step.first ? await restedAgain(context, accountOf(chosen.entry)) : undefined,
      failover: this.failoverOn && step.rows.length >= 2,
      why: this.failoverOn ? "there is no other entry to move to," : "failover is off,",
      rows: step.rows,
      record: step.records.get(chosen.entry.id)!,
      // the models every known agent offers: a limit that names one is that model's
      models: [...new Set([...step.records.values()].flatMap((record) => record.manifest?.models?.names ?? []))],
      redact: (text) => this.redactor.redact(text),
      redactLines: (lines) => this.redactor.redactLines(lines),
      terminal: options.terminal,
      stopped: this.stopped,
      starting: (run) => this.starting(run, previous),
      active: (pid) => (pid === undefined ? active.delete(this.journal) : active.set(this.journal, pid)),
      gate: screenGate(chosen.manifest!),
    });
    this.runs.push(report);
    this.tried.add(chosen.entry.key);
    this.sayProblems();
    if (report.end !== "failed-start") {
      this.spoken ||= report.userTurns > 0 || prompt !== undefined;
      if (part) this.parts.push(part);
    }
    return report;
  }

  // The handoff prompt for the chosen entry, kept in the session's folder with the whole transcript.
  private handoff(chosen: Assessment): Handoff {
    const parts = this.parts;
    const prompt = buildHandoff({
      parts,
      maxSize: MAX_PROMPT_SIZE,
      transcriptFile: join(this.journal.folder, `transcript-${parts.length}.txt`),
      // the saved transcript lies outside the project: pointed at only for an agent whose tools can read there
      canReadFile: chosen.manifest!.reads_outside_project === true,
      // the branch, status and size of uncommitted changes, when the user asked for them; never the diff
      workspace: this.context.config.handoffWorkspace ? workspaceState(this.context.cwd) : undefined,
      redact: (text) => this.redactor.redact(text),
      receiver: chosen.entry.key,
    });
    this.journal.save(`transcript-${parts.length}.txt`, prompt.transcript + "\n");
    this.journal.save(`prompt-${parts.length}.txt`, prompt.prompt);
    return prompt;
  }

  // Told once per handoff, right before the line that says it, whichever entry is tried first.
  private starting(run: RunReport, previous: RunReport | undefined): void {
    if (previous && this.notified !== previous) {
      this.notified = previous;
      const reason = previous.limit!.reason;
      this.notifier.send(reason === "rotate" ? "rotate" : reason === "home" ? "home" : "failover", handoffFacts(previous, run));
    }
    this.sayProblems();
    this.emit({ type: "run-starting", run, previous, commandKey: this.context.config.commandKey });
  }

  // What a run's end means for the session: try the next entry, fail over, or end.
  private async afterRun(chosen: Assessment, report: RunReport): Promise<SessionResult | undefined> {
    const key = chosen.entry.key;
    if (report.end === "failed-start") {
      this.journal.write("start-failed", { entry: key, reason: report.failure, ...(report.took === false ? { receiver: true } : {}) });
      this.emit({ type: "start-failed", run: report });
      this.failures.set(key, `could not take over: ${report.failure}`);
      if (report.signIn) this.needsSignIn.set(key, `${report.signIn} (it asked at its last start in this session)`);
      // one that never ran leaves nothing to end the session with; one that exited at once does, unless it was handed
      // the conversation and never took it (then no entry could carry it on)
      this.failed = report.exitCode === null || report.took === false ? undefined : report;
      return undefined;
    }
    this.failed = undefined;
    this.emit({ type: "run-ended", run: report });
    if (report.limit?.action === "failover") {
      this.journal.write("handoff-from", { entry: key, reason: report.limit.reason, stopped_by: report.stoppedBy ?? "exit" });
      this.tried.clear();
      this.failures.clear();
      // going home, the fallback stays a candidate: should the preferred entry not take over, the work comes back
      // (and is not sent home again: that entry no longer rests, and only an entry resting when a run starts is
      // one to go back to, so it happens once per reset)
      if (!report.limit.home) this.tried.add(key);
      return undefined;
    }
    return await this.finish(endOf(report, this.stopped.aborted ? (String(this.stopped.reason) as NodeJS.Signals) : undefined));
  }

  // What the session holds beyond its runs: the notifier and the shared rest store.
  close(): void {
    this.notifier.close();
    notifiers.delete(this.notifier);
    this.shared?.close();
  }

  // The shared rest store, its rests merged into the local table first (waited for at most a second; a store that is
  // away is said once and tried in the background). Its client library is loaded only here.
  private async openShared(): Promise<SharedRests> {
    const { SharedRests } = await import("./shared-rests.js");
    const config = this.context.config;
    const options = {
      store: config.sharedRests!,
      dataDir: this.context.dirs.data,
      machine: hostname(),
      entriesOf: (account: string) => entriesOfAccount(this.context.config.entries, account),
      notice: (line: string) => {
        this.storeNotices.push(line);
        this.journal.write("shared-store-notice", { text: line });
      },
      record: (type: string, fields: Record<string, unknown>) => this.journal.write(type, fields),
    };
    return SharedRests.open(options, 1000);
  }

  // a failure of notify_command, and what the shared store had to say, are said between runs, with uuldana's other lines
  private sayProblems(): void {
    const lines = [...this.notifier.takeProblems(), ...this.storeNotices.splice(0)];
    if (lines.length) this.emit({ type: "notes", notes: lines });
  }

  private async finish(facts: Omit<SessionResult, "sessionId" | "runs">, reason?: string): Promise<SessionResult> {
    // notify commands still running end (or are killed) before the session does, and a failure is said
    await this.notifier.settle();
    this.sayProblems();
    this.journal.write("session-end", { exit_code: facts.exitCode, ...(reason ? { reason } : {}) });
    return { sessionId: this.sessionId, runs: this.runs, ...facts };
  }
}

// What one step knows when it starts its entry.
interface StepFacts {
  first: boolean;
  handoff: boolean;
  rows: Assessment[];
  ceiling: Level;
  ceilingFrom: CeilingInForce["from"];
  records: ReadonlyMap<string, ManifestRecord>;
}

// The few config values and places a run reads.
function runSettings(context: Context, unattended: boolean): RunSettings {
  const config = context.config;
  return {
    cwd: context.cwd,
    dataDir: context.dirs.data,
    userFile: config.userFile,
    quietSeconds: config.quietSeconds,
    dismissSeconds: config.dismissSeconds,
    cooldownMinutes: config.cooldownMinutes,
    receiverSeconds: config.receiverSeconds,
    rotateAtPercentLeft: config.rotateAtPercentLeft,
    returnHome: config.returnHome,
    commandKey: config.commandKey,
    scrollback: config.scrollback,
    paidUsage: config.paidUsage,
    unattended,
  };
}

// uuldana itself has crashed: each running agent climbs the stop ladder in a bounded synchronous wait (about two
// seconds at most, then KILL), and its session ends in the journal; what notify commands left running is killed. For
// the CLI's last handler; never throws.
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
  for (const notifier of notifiers) notifier.close();
  notifiers.clear();
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
    const near = closestWord(key, rows.map((row) => row.entry.key));
    throw new UuldanaError("E_USAGE", `--provider ${key}: no entry has this key`, {
      details: [`  entries: ${rows.map((row) => row.entry.key).join(", ") || "none"}`],
      hint: near ? `did you mean --provider ${near}?` : 'run "uuldana providers list --all" to see every entry and provider',
    });
  }
  return [rows[index]!, ...rows.slice(0, index), ...rows.slice(index + 1)];
}

function nothingCanRun(rows: Assessment[], ceiling: Level, failures: ReadonlyMap<string, string>, signIn: ReadonlyMap<string, string>): NothingCanRun {
  const firstReturn = rows
    .map((row) => row.restingUntil)
    .filter((until): until is Date => until !== undefined)
    .sort((a, b) => a.getTime() - b.getTime())[0];
  const reasons = (row: Assessment): string[] => (row.reasons.length ? row.reasons : [failures.get(row.entry.key) ?? signIn.get(row.entry.key)].filter((reason) => reason !== undefined));
  return { ceiling, entries: rows.map((row) => ({ entry: row.entry.key, reasons: reasons(row) })), firstReturn };
}

// The session-start line's ceiling: the level, and where it came from when not the user's standing choice.
function ceilingFields(ceiling: CeilingInForce): Record<string, string> {
  return ceiling.from === "command line" || ceiling.from === "project" ? { ceiling: ceiling.level, ceiling_from: ceiling.from } : { ceiling: ceiling.level };
}
