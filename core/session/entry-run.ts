import { randomUUID } from "node:crypto";
import { basename, join } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { userLocale } from "../base/locale.js";
import { processStarted } from "../base/process.js";
import { escapeControls } from "../base/safe-text.js";
import { changeOrder, type OrderChange } from "../config/agent-order.js";
import type { Context } from "../config/context.js";
import type { Level } from "../config/levels.js";
import type { DrawnAround } from "../host/drawn-lines.js";
import { startRun, type Run, type RunResult } from "../host/host.js";
import { describeIgnored, type DetectorEvent } from "../reader/detector.js";
import type { NativeQuota, QuotaQuery, Transcript, TranscriptQuery, Turn } from "../registry/adapter.js";
import { compileLinePatterns } from "../registry/patterns.js";
import { formatHookProblem, openProvider, type ProviderHooks } from "../registry/provider.js";
import type { Manifest, ManifestRecord } from "../registry/types.js";
import { compilePhrase } from "../reader/phrases.js";
import { classifyText, type Verdict } from "../reader/reader.js";
import { restoreTerminal } from "../terminal/tty.js";
import { formatInstant, onlyResting, type Assessment } from "./eligibility.js";
import type { RunPart } from "./handoff.js";
import { saveSessionFile, type Journal } from "./journal.js";
import { QuotaWatch } from "./quota-watch.js";
import { avoidResting, exhaustedModel, modelOf, switchTarget } from "./model-switch.js";
import { SwitchAttempt } from "./switch-attempt.js";
import { ReceiverWatch, type ReceiverOutcome } from "./receiver.js";
import { modelKey, readCooldowns, restingUntil, updateCooldowns, watchCooldowns, type Cooldown, type CooldownWrite } from "./cooldowns.js";
import { recordQuota, type QuotaWindow } from "./quota-store.js";
import type { LimitKind } from "../reader/reader.js";
import type { LimitEvent, RunReport, RunStart } from "./result.js";

export interface EntryRunOptions {
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
}

// What a run leaves for the next: its report and its part of the conversation.
export interface EntryRunEnd {
  report: RunReport;
  part: RunPart | undefined;
}

// How long after the agent's own numbers say the allowance is gone the run is stopped on them alone, beyond the
// quiet time the printed message would have taken: the two, when both come, are one event.
const NATIVE_GRACE_MS = 500;
// The kinds of limit the agents' own windows are.
const WINDOW_KINDS: Record<string, LimitKind> = { five_hour: "session", seven_day: "weekly", seven_day_opus: "per-model", seven_day_sonnet: "per-model", primary: "session", secondary: "weekly" };

// A start that fails this soon with a failing status counts as "could not start": the next entry is tried.
const FAILED_START_MS = 3000;
// The run's drawn lines are saved this long after the agent drew some not saved yet (and at each candidate and its
// outcome, and at the run's end), so a report written while the session runs has them.
const DRAWN_SAVE_MS = 5000;

// One run of one entry: started with its level's flags (and the handoff prompt), watched for a gone allowance. What
// the agent's screen says is decided here, in one place: the host reports what the detector saw, this journals it,
// rests the entry and stops the agent (or leaves it running when no other entry can take over).
export async function runEntry(context: Context, chosen: Assessment, options: EntryRunOptions): Promise<EntryRunEnd> {
  const manifest = chosen.manifest!;
  const level = chosen.level!;
  const flags = manifest.levels![level]!;
  // the CLI's session id, chosen by uuldana where the CLI lets its caller choose: its transcript is found by it
  const sessionId = chooseSessionId(manifest, [...chosen.entry.args, ...options.agentArgs]);
  const idArgs = sessionId ? manifest.session_id!.args.map((arg) => arg.replaceAll("{id}", sessionId)) : [];
  // a model that rests on its own (it ran out at an earlier per-model limit) is not the one this run starts with
  const restingModels = new Set(chosen.restingModels.map((row) => row.model));
  const userArgs = avoidResting([...chosen.entry.args, ...options.agentArgs], manifest, restingModels);
  const args = [...(manifest.args ?? []), ...(flags.args ?? []), ...idArgs, ...userArgs.args];
  const promptMode = manifest.prompt?.mode ?? "none";
  if (options.prompt && promptMode === "argv") args.push(options.prompt);
  if (options.prompt && promptMode === "flag") args.push(manifest.prompt!.flag!, options.prompt);
  // the level's environment comes last: an entry's env may not loosen what the level enforces
  const env = { ...stringEnv(process.env), ...chosen.entry.env, ...(flags.env ?? {}) };
  // what the quota hooks are told; a status-line source writes its feed in the session's folder
  const feed = manifest.quota?.source === "statusline" ? join(options.journal.folder, `status-${options.runIndex}.json`) : undefined;
  const quotaQuery: QuotaQuery = { cwd: context.cwd, env, started: new Date(), sessionId, feed };
  const phrases = (manifest.limit_phrases ?? []).map(compilePhrase);
  const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  // the agent prints dates in the locale of the environment it runs with
  const locale = userLocale(env);
  const report: RunReport = {
    entry: chosen.entry.key,
    provider: chosen.entry.id,
    name: manifest.name,
    version: chosen.detection?.version ?? null,
    level,
    start: options.start,
    prompted: options.prompt !== undefined,
    nativeResume: options.nativeResume,
    restedUntil: options.restedUntil,
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
  // one line each in uuldana's prompt: a key from a project's config may not break its line
  const resting = options.rows.filter((row) => row.restingUntil).map((row) => `${escapeControls(row.entry.key)} until ${formatInstant(row.restingUntil!)}`);
  const conversationFile = `conversation-${options.runIndex}.txt`;
  const drawnFile = `drawn-${options.runIndex}.txt`;
  const shownArgs = args.map((arg) => (arg === options.prompt ? `<prompt: ${options.promptFile}>` : arg));
  const runStart = {
    entry: chosen.entry.key,
    provider: chosen.entry.id,
    name: manifest.name,
    version: report.version,
    level,
    argv: [chosen.detection!.path, ...shownArgs],
    ...(options.promptFile ? { prompt_file: basename(options.promptFile) } : {}),
  };
  options.starting(report);
  // the provider's adapter is imported now that it runs; one that will not load keeps its entry from starting
  let hooks: ProviderHooks;
  try {
    hooks = await openProvider(options.record, {
      report: (problem) => {
        report.hookProblems.push(formatHookProblem(problem));
        options.journal.write("hook-off", { entry: chosen.entry.key, provider: problem.provider, ...(problem.pack ? { pack: problem.pack } : {}), hook: problem.hook, failure: problem.failure, message: problem.message });
      },
    });
  } catch (error) {
    if (!(error instanceof UuldanaError) || (error.code !== "E_ADAPTER_LOAD" && error.code !== "E_ADAPTER_INVALID")) throw error;
    options.journal.write("run-start", runStart);
    return { report: { ...report, end: "failed-start", failure: `${error.message} [${error.code}]` }, part: undefined };
  }
  // the run's own settings, where the CLI takes a settings file for one run: how it is told to feed uuldana its status
  const settingsFlag = manifest.quota?.settings_flag;
  const settings = settingsFlag ? hooks.launchSettings(quotaQuery) : undefined;
  if (settingsFlag && settings) {
    // the file holds the user's own status-line command as their settings give it: written as is, readable by them only
    const file = saveSessionFile(options.journal.folder, `settings-${options.runIndex}.json`, JSON.stringify(settings, null, 2) + "\n");
    args.splice((manifest.args ?? []).length + (flags.args ?? []).length + idArgs.length, 0, settingsFlag, file);
    runStart.argv = [chosen.detection!.path, ...args.map((arg) => (arg === options.prompt ? `<prompt: ${options.promptFile}>` : arg))];
  }
  let stopping: Promise<unknown> | undefined;
  let cooldownWritten: Promise<unknown> | undefined;
  let run: Run;
  // the candidates of this run, numbered from 1: each outcome names the one it ends
  let candidates = 0;
  let drawnTimer: NodeJS.Timeout | undefined;
  let runOver = false;
  const saveDrawn = (): void => {
    clearTimeout(drawnTimer);
    drawnTimer = undefined;
    const lines = run.drawnTail();
    options.journal.save(drawnFile, lines.length ? lines.join("\n") + "\n" : "");
  };
  // between the saves that must happen, the lines drawn meanwhile are saved once the timer is due
  const saveDrawnSoon = (): void => {
    if (runOver) return;
    drawnTimer ??= setTimeout(() => {
      try {
        saveDrawn();
      } catch {
        // a disk that cannot take it now: the save at the next candidate, turn or the run's end says so
      }
    }, DRAWN_SAVE_MS).unref();
  };

  // the one place a limit event is decided; every candidate is journaled as it is seen, with the lines around it
  const decide = (event: DetectorEvent, drawn: DrawnAround): void => {
    const entry = chosen.entry.key;
    if (event.type === "candidate") {
      const { stop, score, kind, reset_at, reasons } = event.verdict;
      options.journal.write("candidate", {
        entry,
        candidate: ++candidates,
        text: event.text,
        stop,
        score,
        kind,
        reset_at,
        reasons,
        quiet_seconds: context.config.quietSeconds,
        dismiss_seconds: context.config.dismissSeconds,
        zone: timeZone,
        lines_before: drawn.before,
        lines: drawn.lines,
      });
      saveDrawn();
      return;
    }
    const outcome = { candidate: candidates, lines_after: drawn.after };
    if (event.type === "dismissed") {
      report.ignored.push({ at: event.at, text: event.text });
      // why: the agent kept working, or the message read whole (with the lines drawn after it) is no stop
      const why = event.whole ? { why: "read whole", reasons: event.whole.reasons.map((reason) => options.redact(reason)) } : { why: "working" };
      options.journal.write("ignored", { entry, text: event.text, score: event.verdict.score, ...why, ...outcome });
      saveDrawn();
      run.warn(true);
      return;
    }
    if (event.type === "left") {
      options.journal.write("left", { entry, text: event.text, score: event.verdict.score, ...outcome });
      return;
    }
    // after a limit left to the agent's own wait, a new limit message counts again: left to it again while its screen
    // shows a wait, else the agent has stopped for good and the session moves on
    if (switching || (report.limit && report.limit.action !== "left to the agent")) return;
    const offer = event.after === "failing exit" ? undefined : ownOffer();
    // the agent's own numbers, when they say the same, make the one event native, with the printed text beside them
    const native = (lastNative?.exhausted ? lastNative : readNative())?.exhausted;
    const printed = limitEvent(event, context.config.cooldownMinutes, options);
    const limit = native ? withNative(printed, native, context.config.cooldownMinutes) : printed;
    const more = { score: event.verdict.score, ...outcome };
    // a limit of one model: another model of the same agent first, when the entry asks for it
    const from = event.after !== "failing exit" && !report.limit ? switchable(limit) : undefined;
    if (from) void switchModel(limit, from.model, from.to, () => settle(offered(limit, offer), more));
    else settle(offered(limit, offer), more);
  };

  // In-place model switch (the entry's switch_models): at a per-model limit whose model is known and another one is
  // left, type the manifest's switch keys, see the new model named on the screen, ask the agent to go on (unless the
  // CLI retries by itself) and see it take that turn; the model that ran out rests on its own. Anything less: the
  // limit takes its usual course.
  let switching = false;
  // the model the agent runs on, when known: the one its arguments chose, then each it was switched to
  let currentModel = modelOf(userArgs.args, manifest);
  let switcher: SwitchAttempt | undefined;
  const switchable = (limit: LimitEvent): { model: string; to: string } | undefined => {
    if (!chosen.entry.switchModels || !manifest.models?.switch_keys?.length || limit.kind !== "per-model") return undefined;
    const model = exhaustedModel(limit.text, manifest, currentModel);
    const to = model === undefined ? undefined : switchTarget(manifest, model, restingModels);
    return model !== undefined && to !== undefined ? { model, to } : undefined;
  };
  const switchModel = async (limit: LimitEvent, from: string, to: string, fail: () => void): Promise<void> => {
    switching = true;
    const entry = chosen.entry.key;
    options.journal.write("switch", { entry, from, to, text: limit.text });
    switcher ??= new SwitchAttempt(
      { visible: () => run.screen.visible(), write: (data) => run.agent.write(data), busy: (visible) => hooks.busy(visible), classify, over: () => runOver },
      manifest,
      { seconds: context.config.receiverSeconds, quietMs: context.config.quietSeconds * 1000 },
    );
    const failed = await switcher.to(to);
    switching = false;
    if (runOver) return;
    if (failed) {
      options.journal.write("switch-failed", { entry, from, to, reason: failed });
      fail();
      return;
    }
    restingModels.add(from);
    currentModel = to;
    report.switches.push({ from, to, restsUntil: limit.restsUntil });
    options.journal.write("switched", { entry, from, to, reset_at: limit.resetAt });
    cooldownWritten = Promise.all([cooldownWritten, rest(modelKey(entry, from), { until: limit.restsUntil, source: limit.source, kind: "per-model", text: limit.text, model: from })]);
    // the agent goes on: its next limit counts again
    run.readOn();
  };

  // What the agent itself offers at a limit, by the lines its screen shows now: a wait for its reset, or a switch to
  // another model; and what uuldana does about it (the entry's native_wait, else its manifest's default).
  const waitsLine = compileLinePatterns(manifest.native_wait?.waits ?? []);
  const switchesLine = compileLinePatterns(manifest.native_wait?.switches ?? []);
  const choice = chosen.entry.nativeWait ?? manifest.native_wait?.default ?? "failover";
  const ownOffer = (): NonNullable<LimitEvent["offer"]> | undefined => {
    if (!manifest.native_wait) return undefined;
    const visible = run.screen.visible();
    const kind = visible.some(waitsLine) ? "wait" : visible.some(switchesLine) ? "switch" : undefined;
    return kind ? { kind, choice } : undefined;
  };
  const offered = (limit: LimitEvent, offer: LimitEvent["offer"]): LimitEvent =>
    !offer ? limit : { ...limit, offer, ...(offer.choice === "allow" && limit.action === "failover" ? { action: "left to the agent" as const } : {}) };
  // An agent that switched itself to another model at a limit carries on, and the reader lets it. With native_wait
  // "allow" the switch is recorded once; with "failover" it is the limit of the model it left, and the session moves
  // on. Looked for in the lines the agent draws only when its manifest names such lines.
  let switchSeen = false;
  const watchSwitch = (lines: readonly string[]): void => {
    if (switchSeen || !manifest.native_wait?.switches || report.limit || runOver) return;
    const line = lines.find(switchesLine)?.trim();
    if (!line) return;
    switchSeen = true;
    if (choice === "allow") {
      options.journal.write("native-switch", { entry: chosen.entry.key, text: line, native_wait: "allow" });
      return;
    }
    settle({ ...nativeSwitch(line, context.config.cooldownMinutes, options), offer: { kind: "switch", choice } });
  };

  // A rest in the cooldown table (the entry's, or one model's), its text redacted, journaled once written or kept. Waits
  // at most a second for another writer; a rest not written then is kept and written later.
  const rest = (key: string, row: Omit<Cooldown, "since">): Promise<CooldownWrite> =>
    updateCooldowns(context.dirs.data, (entries) => {
      entries.set(key, { ...row, since: new Date(), text: row.text === undefined ? undefined : options.redact(row.text) });
    }).then((write) => {
      const model = row.model ? { model: row.model } : {};
      options.journal.write("cooldown", { entry: key, ...model, until: row.until.toISOString(), ...(write.written ? {} : { written: false }), ...(write.notice ? { notice: write.notice } : {}) });
      return write;
    });

  // The one place a limit event is settled, printed or native: journaled, the entry rested, the agent stopped.
  const settle = (limit: LimitEvent, more: Record<string, unknown> = {}): void => {
    const entry = chosen.entry.key;
    report.limit = limit;
    clearTimeout(nativeTimer);
    if (limit.reason === "home") {
      // nothing ran out: the entry does not rest
      options.journal.write("home", { entry, to: limit.home!.entry, rested_until: limit.home!.until, text: limit.text });
      stopping = run.stop();
      return;
    }
    options.journal.write("limit", {
      entry,
      source: limit.source,
      reason: limit.reason,
      text: limit.text,
      kind: limit.kind,
      reset_at: limit.resetAt,
      after: limit.after,
      ...(limit.window ? { window: limit.window.name, percent_left: limit.window.percentLeft, threshold: limit.window.threshold } : {}),
      ...(limit.offer ? { offer: limit.offer.kind, native_wait: limit.offer.choice, action: limit.action } : {}),
      ...more,
    });
    saveDrawn();
    // the rest another session wrote is in the table already
    if (limit.reason === "shared-rest") limit.rested = true;
    else {
      cooldownWritten = rest(entry, { until: limit.restsUntil, source: limit.source, kind: limit.kind, text: limit.text }).then((write) => {
        limit.rested = write.written;
        limit.cooldownNotice = write.notice;
      });
    }
    if (limit.action === "failover") stopping = run.stop();
    if (limit.action === "left to the agent") run.readOn();
  };

  // The reader for this run: the general reader with the provider's wording, models and classifier.
  const classify = (text: string): Verdict => classifyText(text, { now: new Date(), timeZone, locale, phrases, models: options.models, provider: hooks.classify });

  // The agent's own quota numbers: each reading kept (the entry's latest in the data dir, a change in the journal);
  // one that says the allowance is gone stops the run once the agent has had time to say so itself (the two are
  // then one event); one at or below the rotation threshold moves the session on at the next turn boundary.
  const threshold = chosen.entry.rotateAtPercentLeft ?? context.config.rotateAtPercentLeft;
  let lastNative: NativeQuota | undefined;
  let lastJournaled = "";
  let nativeTimer: NodeJS.Timeout | undefined;
  let rotating = false;

  // Rests seen in the cooldown table while the run runs. Another uuldana session that rested this entry (or the model
  // it runs on) means its account is at the wall: the session moves on at the next turn boundary instead of walking
  // into it. An entry higher in the list whose rest is over brings the session back home (return_home), at the next
  // turn boundary, once per reset.
  const homeCandidates = context.config.returnHome
    ? options.rows
        .filter((row) => row.order < chosen.order && onlyResting(row))
        .map((row) => ({ entry: row.entry.key, until: row.restingUntil! }))
        .sort((a, b) => a.until.getTime() - b.until.getTime())
    : [];
  let movingOn = false;
  const lookAtRests = async (): Promise<void> => {
    if (movingOn || report.limit || runOver || switching) return;
    const table = await readCooldowns(context.dirs.data);
    const now = new Date();
    const key = chosen.entry.key;
    const own = [table.entries.get(key), currentModel ? table.entries.get(modelKey(key, currentModel)) : undefined].find((row) => row && row.until > now);
    const home = homeCandidates.find((row) => !restingUntil(table, row.entry, now));
    if (!own && !home) return;
    movingOn = true;
    await run.atTurnBoundary(context.config.quietSeconds * 1000);
    if (report.limit || runOver || switching) return;
    if (own) settle(sharedRest(own, context.config.cooldownMinutes));
    else settle(goingHome(home!));
  };
  const readNative = (): NativeQuota | undefined => {
    if (!hooks.hasQuota || runOver) return undefined;
    const reading = hooks.quota(quotaQuery);
    if (!reading) return undefined;
    lastNative = reading;
    recordQuota(context.dirs.data, { entry: chosen.entry.key, at: new Date(), source: manifest.quota?.source ?? "adapter", windows: storedWindows(reading) });
    const said = JSON.stringify(reading);
    if (said !== lastJournaled) {
      lastJournaled = said;
      options.journal.write("quota", { entry: chosen.entry.key, windows: reading.windows, ...(reading.exhausted ? { exhausted: reading.exhausted } : {}) });
    }
    return reading;
  };
  const onNative = (): void => {
    const reading = readNative();
    if (!reading || report.limit || runOver) return;
    // numbers after an answer: the agent handed the conversation (or asked to go on after a switch) has taken it
    receiver?.sign("quota");
    if (reading.exhausted) {
      const gone = reading.exhausted;
      nativeTimer ??= setTimeout(() => {
        if (!report.limit && !runOver && !switching) settle(nativeLimit(gone, context.config.cooldownMinutes, options));
      }, context.config.quietSeconds * 1000 + NATIVE_GRACE_MS);
      return;
    }
    const low = lowestWindow(reading);
    if (threshold === undefined || !options.failover || rotating || !low || low.percentLeft > threshold) return;
    rotating = true;
    void run.atTurnBoundary(context.config.quietSeconds * 1000).then(() => {
      if (!report.limit && !runOver && !switching) settle(rotation(low, threshold, context.config.cooldownMinutes));
    });
  };

  try {
    run = startRun({
      file: chosen.detection!.path!,
      args,
      env,
      cwd: context.cwd,
      entry: chosen.entry.key,
      level,
      exit: manifest.exit,
      commandKey: context.config.commandKey,
      scrollback: context.config.scrollback,
      ...options.terminal,
      ...(options.prompt ? { firstPrompt: options.prompt } : {}),
      ...(options.prompt && promptMode === "typed" ? { typedPrompt: { text: options.prompt, ready: (screen: readonly string[]) => hooks.ready(screen) === true } } : {}),
      detect: {
        quietSeconds: context.config.quietSeconds,
        dismissSeconds: context.config.dismissSeconds,
        classify,
        busy: hooks.busy,
      },
      redactLines: options.redactLines,
      onDrawn: (lines) => {
        saveDrawnSoon();
        receiver?.drawn();
        switcher?.drawn();
        watchSwitch(lines);
      },
      onKey: () => {
        receiver?.typed();
      },
      onUserTurn: (text) => {
        options.journal.write("user", { entry: chosen.entry.key, text });
        // the conversation so far is kept current at each turn, in a file of its own
        void run.screen.read({ conversation: true }).then(({ conversation }) => {
          if (conversation) options.journal.save(conversationFile, conversation + "\n");
        });
      },
      onDetection: decide,
      describe: {
        header: () => [
          `session ${options.sessionId} · ceiling ${options.ceiling}`,
          `resting: ${resting.length ? resting.join(", ") : "none"}`,
          ...report.ignored.map(describeIgnored),
          ...report.hookProblems,
        ],
        status: () => [`session ${options.sessionId}`, `ceiling ${options.ceiling}; resting: ${resting.length ? resting.join(", ") : "none"}`],
        agent: (words) => agentCommand(context, options.rows, words),
      },
    });
  } catch (error) {
    if (error instanceof UuldanaError && error.code === "E_AGENT_START") {
      options.journal.write("run-start", runStart);
      return { report: { ...report, end: "failed-start", failure: error.message }, part: undefined };
    }
    throw error;
  }
  // the session told to stop (SIGTERM, SIGHUP or SIGINT to uuldana) stops the agent the graceful way, even when
  // the signal came just before this run started
  const stopRun = (): void => void run.stop();
  options.stopped.addEventListener("abort", stopRun);
  if (options.stopped.aborted) stopRun();
  options.active(run.agent.pid);
  const startedAt = new Date();
  // an agent handed the conversation must show that it took it; one that does not in time is stopped, and the walk
  // goes on to the next entry (it did not hit a limit: it does not rest)
  let receiverFailure: Extract<ReceiverOutcome, { took: false }> | undefined;
  const receiver = options.prompt
    ? new ReceiverWatch({
        seconds: context.config.receiverSeconds,
        prompt: options.prompt,
        // its screen, its work, its transcript (whose first user turn is the prompt it was started with)
        signs: {
          screen: () => run.screen.read({ conversation: true }),
          busy: (visible) => hooks.busy(visible),
          transcriptTurn: () =>
            hooks.hasTranscript &&
            hooks.transcript({ cwd: context.cwd, env, started: startedAt, ended: new Date(), sessionId, prompt: options.prompt })?.turns.some((turn) => turn.role === "user" && turn.text.includes(options.prompt!.split("\n")[0]!)) === true,
        },
        decided: (outcome) => {
          const lines = outcome.took ? {} : { reason: outcome.reason, lines: options.redactLines(outcome.lines) };
          options.journal.write("receiver", { entry: chosen.entry.key, took: outcome.took, ...(outcome.took ? { by: outcome.by, after_ms: outcome.afterMs } : lines) });
          if (outcome.took || report.limit || runOver) return;
          receiverFailure = outcome;
          stopping ??= run.stop();
        },
      })
    : undefined;
  // the agent's own quota numbers, read whenever the files it writes them to change
  const quotaWatch = hooks.hasQuota ? new QuotaWatch(hooks.quotaFiles(quotaQuery), onNative) : undefined;
  // the cooldown table, for a rest another session writes for this entry, and for entries higher in the list that
  // return (return_home); and a timer to the first of those returns
  const unwatchRests = options.failover ? watchCooldowns(context.dirs.data, () => void lookAtRests()) : undefined;
  const homeTimer = homeCandidates.length ? setTimeout(() => void lookAtRests(), Math.max(0, homeCandidates[0]!.until.getTime() - Date.now()) + 50).unref() : undefined;
  let ended: RunResult;
  try {
    // the agent's pid, and when it began (a reused pid began later): a later command can tell that it still runs.
    // Written once a crash of uuldana can stop the agent, so a journal that cannot be written (a full disk) stops it too
    options.journal.write("run-start", { ...runStart, drawn_file: drawnFile, pid: run.agent.pid, pid_start: processStarted(run.agent.pid) ?? null });
    ended = await run.result;
    await stopping;
    await cooldownWritten;
    // an agent that exited by itself before it took the conversation (and before the user typed to it) failed to start
    if (receiver && !receiver.decided && !report.limit && !ended.typed) {
      const how = ended.signal ? `was killed by signal ${ended.signal}` : `exited with status ${ended.exitCode}`;
      const outcome = await receiver.exited(how);
      if (!outcome.took) receiverFailure = outcome;
    }
  } finally {
    runOver = true;
    receiver?.close();
    quotaWatch?.close();
    unwatchRests?.();
    clearTimeout(homeTimer);
    clearTimeout(nativeTimer);
    clearTimeout(drawnTimer);
    options.stopped.removeEventListener("abort", stopRun);
    options.active(undefined);
    restoreTerminal();
  }
  saveDrawn();
  // a limit left to the agent's own wait: the agent exiting with a failing status meanwhile has stopped for good
  if (report.limit?.action === "left to the agent" && !options.stopped.aborted && (ended.exitCode !== 0 || ended.signal) && options.failover) {
    report.limit.action = "failover";
    options.journal.write("limit-taken-back", { entry: chosen.entry.key, why: ended.signal ? `it was killed by signal ${ended.signal}` : `it exited with status ${ended.exitCode}` });
  }
  // the adapter's reading of the turns on the screen, where the general reading of its screen is wrong for it
  const turns = hooks.conversation(ended.conversation);
  const conversation = turns ? turns.map(formatTurn).join("\n") : ended.conversation;
  options.journal.save(conversationFile, conversation + "\n");
  // the run's own transcript, where the agent keeps one and its adapter reads it
  const read = readTranscript(hooks, { cwd: context.cwd, env, started: startedAt, ended: new Date(), sessionId, prompt: options.prompt });
  const turnsFile = `turns-${options.runIndex}.json`;
  if (read.transcript) options.journal.save(turnsFile, JSON.stringify(read.transcript.turns) + "\n");
  options.journal.write("conversation", {
    entry: chosen.entry.key,
    name: manifest.name,
    file: conversationFile,
    source: read.transcript ? "transcript" : "screen",
    ...(read.transcript ? { transcript: read.transcript.file, turns_file: turnsFile, turns: read.transcript.turns.length } : {}),
    ...(read.tried ? { read_ms: read.ms } : {}),
    ...(read.tried && !read.transcript ? { fallback: "its transcript could not be found or read" } : {}),
  });
  options.journal.write("run-end", { entry: chosen.entry.key, exit_code: ended.exitCode, signal: ended.signal ?? null, stopped_by: ended.stop?.step ?? null, user_turns: ended.userTurns.length });
  // a signal to uuldana means the user wants to stop, even if a limit came first
  if (report.limit && options.stopped.aborted) report.limit.action = "stopped";
  const stoppedBy = ended.stop && ended.stop.step !== "exited" ? ended.stop.step : null;
  Object.assign(report, {
    end: stoppedBy ? "stopped" : ended.signal ? "killed" : "exited",
    exitCode: ended.exitCode,
    signal: ended.signal ?? null,
    stoppedBy,
    durationMs: ended.durationMs,
    userTurns: ended.userTurns.length,
  } satisfies Partial<RunReport>);
  report.took = receiver ? receiver.decided?.took ?? false : undefined;
  if (receiverFailure && !report.limit && !options.stopped.aborted) {
    report.end = "failed-start";
    report.failure = oneLine(receiverFailure, options.redact);
  } else if (!report.limit && !options.stopped.aborted && ended.exitCode !== 0 && ended.durationMs < FAILED_START_MS && !ended.typed) {
    report.end = "failed-start";
    report.failure = `it exited with status ${ended.exitCode} at once`;
  }
  // an account with no allowance at all, shown before the user's first turn: the entry could not start work (it
  // rests all the same, so the session does not try it again and again)
  if (report.limit?.kind === "account" && report.limit.action === "failover" && ended.userTurns.length === 0 && !ended.typed) {
    report.end = "failed-start";
    report.failure = `its account has no allowance: ${escapeControls(options.redact(report.limit.text)).replace(/\s+/g, " ").slice(0, 160)}`;
  }
  report.conversationFrom = read.transcript ? "transcript" : read.tried ? "screen, its transcript unread" : "screen";
  return {
    report,
    part: {
      entry: chosen.entry.key,
      name: manifest.name,
      conversation,
      transcript: read.transcript,
      stopText: report.limit?.text,
      prompt: options.prompt,
      typed: ended.userTurns,
      chrome: turns ? undefined : hooks.chrome,
      rotated: report.limit?.reason === "rotate" ? report.limit.text : undefined,
      handedBack: report.limit?.reason === "home" ? whatItDid(read.transcript, ended.userTurns) : undefined,
    },
  };
}

// --- internal ---

// A receiver that did not take the conversation, in one line: why, and the last line its screen showed.
function oneLine(failure: Extract<ReceiverOutcome, { took: false }>, redact: (text: string) => string): string {
  const last = failure.lines.at(-1)?.trim();
  const shown = last ? `; its screen ends "${escapeControls(redact(last)).replace(/\s+/g, " ").slice(0, 100)}"` : "";
  return `${failure.reason}${shown}`;
}

// What a limit not yet settled says of the session's next step: another entry takes over, or (failover off, no other
// entry) the agent keeps running, and why.
function settling(options: EntryRunOptions): Pick<LimitEvent, "rested" | "action" | "why" | "cooldownNotice"> {
  return { rested: false, action: options.failover ? "failover" : "kept running", why: options.failover ? undefined : options.why, cooldownNotice: undefined };
}

// What a stop means for this session: until when the entry rests, and whether another entry takes over.
function limitEvent(event: Extract<DetectorEvent, { type: "stop" }>, cooldownMinutes: number, options: EntryRunOptions): LimitEvent {
  const reset = event.verdict.reset_at ? new Date(event.verdict.reset_at) : undefined;
  const restsUntil = reset && reset.getTime() > Date.now() ? reset : new Date(Date.now() + cooldownMinutes * 60_000);
  return {
    source: "inferred",
    reason: "limit",
    kind: event.verdict.kind,
    resetAt: event.verdict.reset_at,
    text: event.text,
    after: event.after,
    restsUntil,
    ...settling(options),
  };
}

// A printed stop that the agent's own numbers confirm: native, with their reset, the printed text kept.
function withNative(printed: LimitEvent, native: NonNullable<NativeQuota["exhausted"]>, cooldownMinutes: number): LimitEvent {
  const resetAt = native.reset_at ?? printed.resetAt;
  return { ...printed, source: "native", kind: (native.kind as LimitKind | undefined) ?? printed.kind, resetAt, restsUntil: restUntil(resetAt, cooldownMinutes) };
}

// What a fallback agent did since it took over, for the entry it hands the work back to: the requests it took, and
// the files its transcript says its tools changed (tools whose names say they edit, write, patch, create, move or
// delete); from a screen alone, the requests only.
function whatItDid(transcript: Transcript | undefined, typed: readonly string[]): string {
  const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? "" : "s"}`;
  if (!transcript) return `since then it took ${plural(typed.length, "request")} from the user; what it changed is not known (its part below is from its screen)`;
  const requests = transcript.turns.filter((turn) => turn.role === "user").length;
  const files = [...new Set(transcript.turns.filter((turn) => turn.role === "tool").map((turn) => CHANGED.exec(turn.text)?.[1]?.trim()).filter((file): file is string => !!file))];
  const changed = files.length ? `its tools changed ${files.slice(0, 20).join(", ")}${files.length > 20 ? ` and ${files.length - 20} more` : ""}` : "its tools changed no file";
  return `since then it took ${plural(requests, "request")} from the user and ${changed}`;
}

// A tool call that changes a file, as the transcript hooks summarise it ("Edit: src/lexer.ts"): its target.
const CHANGED = /^[\w.-]*(?:edit|write|patch|replace|create|delete|remove|move|rename)[\w.-]*: (.{1,200})$/i;

// Another uuldana session rested this entry (or the model it runs on): the same account is at the wall.
function sharedRest(row: Cooldown, cooldownMinutes: number): LimitEvent {
  const resetAt = row.until.toISOString();
  return {
    source: row.source === "native" ? "native" : "inferred",
    reason: "shared-rest",
    kind: (row.kind as LimitKind | undefined) ?? "unknown",
    resetAt,
    text: `another uuldana session rested it${row.model ? ` (its model ${row.model})` : ""}: ${row.text ?? "its usage allowance is gone"}`,
    after: "turn boundary",
    restsUntil: restUntil(resetAt, cooldownMinutes),
    rested: true,
    action: "failover",
    why: undefined,
    cooldownNotice: undefined,
  };
}

// An entry higher in the list has rested: the session goes back to it; nothing ran out here.
function goingHome(home: { entry: string; until: Date }): LimitEvent {
  return {
    source: "inferred",
    reason: "home",
    kind: "unknown",
    resetAt: null,
    text: `${home.entry} has rested (its allowance returned at ${formatInstant(home.until)})`,
    after: "turn boundary",
    home: { entry: home.entry, until: home.until.toISOString() },
    restsUntil: new Date(),
    rested: false,
    action: "failover",
    why: undefined,
    cooldownNotice: undefined,
  };
}

// The agent switched itself to another model at a limit (native_wait "failover"): that model's allowance is gone.
function nativeSwitch(text: string, cooldownMinutes: number, options: EntryRunOptions): LimitEvent {
  return {
    source: "inferred",
    reason: "limit",
    kind: "per-model",
    resetAt: null,
    text,
    after: "its own switch",
    restsUntil: restUntil(null, cooldownMinutes),
    ...settling(options),
  };
}

// The allowance gone by the agent's own account, with nothing printed that the reader took for it.
function nativeLimit(native: NonNullable<NativeQuota["exhausted"]>, cooldownMinutes: number, options: EntryRunOptions): LimitEvent {
  const resetAt = native.reset_at ?? null;
  return {
    source: "native",
    reason: "limit",
    kind: (native.kind as LimitKind | undefined) ?? "unknown",
    resetAt,
    text: native.text ?? "its own quota reading says the allowance is gone",
    after: "native",
    restsUntil: restUntil(resetAt, cooldownMinutes),
    ...settling(options),
  };
}

// A window nearly spent: the session moves on before the wall, and the entry rests until that window resets (so a
// reading just above the threshold cannot bring it back before then).
function rotation(low: { name: string; percentLeft: number; resetsAt: string | undefined }, threshold: number, cooldownMinutes: number): LimitEvent {
  const resetAt = low.resetsAt ?? null;
  return {
    source: "native",
    reason: "rotate",
    kind: windowKind(low.name),
    resetAt,
    text: `its ${low.name} window had ${formatPercent(low.percentLeft)} left, at or below rotate_at_percent_left ${threshold}`,
    after: "turn boundary",
    window: { name: low.name, percentLeft: low.percentLeft, threshold },
    restsUntil: restUntil(resetAt, cooldownMinutes),
    rested: false,
    action: "failover",
    why: undefined,
    cooldownNotice: undefined,
  };
}

// The kind of limit a window is: by its name, and a named limit's own window ("<model> primary") is that model's.
function windowKind(name: string): LimitKind {
  return WINDOW_KINDS[name] ?? (/ (?:primary|secondary)$/.test(name) ? "per-model" : "unknown");
}

// The window with the least share left, when the reading has one.
function lowestWindow(reading: NativeQuota): { name: string; percentLeft: number; resetsAt: string | undefined } | undefined {
  let low: { name: string; percentLeft: number; resetsAt: string | undefined } | undefined;
  for (const window of reading.windows) {
    const percentLeft = Math.max(0, Math.min(100, 100 - window.usedPercent));
    if (!low || percentLeft < low.percentLeft) low = { name: window.name, percentLeft, resetsAt: window.resetsAt };
  }
  return low;
}

function storedWindows(reading: NativeQuota): QuotaWindow[] {
  return reading.windows.map((window) => ({ name: window.name, usedPercent: window.usedPercent, resetsAt: window.resetsAt ? new Date(window.resetsAt) : undefined, windowMinutes: window.windowMinutes }));
}

// Until when an entry rests: the reset, when it is ahead, else the configured cooldown.
function restUntil(resetAt: string | null, cooldownMinutes: number): Date {
  const reset = resetAt ? new Date(resetAt) : undefined;
  return reset && reset.getTime() > Date.now() ? reset : new Date(Date.now() + cooldownMinutes * 60_000);
}

function formatPercent(value: number): string {
  return `${Math.round(value * 10) / 10}%`;
}

// /agent in uuldana's prompt: the priority list, or a change to its order in config.json.
function agentCommand(context: Context, rows: Assessment[], words: string): string[] {
  const [verb, key] = words.split(/\s+/);
  if (!verb) {
    return [
      "priority list:",
      ...rows.map((row) => `  ${row.order}. ${escapeControls(row.entry.key)}: ${row.eligible ? `ready at ${row.level}` : row.reasons.join("; ")}`),
      "change it: /agent up|down|first|remove ENTRY, or /agent add PROVIDER",
    ];
  }
  if (!["up", "down", "first", "add", "remove"].includes(verb) || !key) return ["usage: /agent [up|down|first|remove ENTRY | add PROVIDER]"];
  return [escapeControls(changeOrder(context.config.userFile, verb as OrderChange, key)), "the next failover walks this order"];
}

// One turn as the next agent reads it: the user's words marked as the user's.
function formatTurn(turn: Turn): string {
  return turn.role === "user" ? `> ${turn.text}` : turn.text;
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

// The run's transcript from its adapter, and how long the reading took; tried is false when the adapter reads none.
function readTranscript(hooks: ProviderHooks, query: TranscriptQuery): { transcript: Transcript | undefined; tried: boolean; ms: number } {
  if (!hooks.hasTranscript) return { transcript: undefined, tried: false, ms: 0 };
  const started = performance.now();
  const transcript = hooks.transcript(query);
  return { transcript, tried: true, ms: Math.round((performance.now() - started) * 10) / 10 };
}

function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) result[key] = value;
  return result;
}
