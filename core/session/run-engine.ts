import { basename } from "node:path";

import { processStarted } from "../base/process.js";
import { escapeControls } from "../base/safe-text.js";
import type { DrawnAround } from "../host/drawn-lines.js";
import { Disposables } from "../host/disposables.js";
import { startRun, type Run, type RunResult } from "../host/host.js";
import type { DetectorEvent } from "../reader/detector.js";
import { compilePhrase } from "../reader/phrases.js";
import { classifyText, type Verdict } from "../reader/reader.js";
import type { NativeQuota } from "../registry/adapter.js";
import type { ProviderHooks } from "../registry/provider.js";
import { restoreTerminal } from "../terminal/tty.js";
import { accountOf } from "../config/config.js";
import { modelKey, recordRests, type Cooldown, type CooldownWrite } from "./cooldowns.js";
import { journalDetection } from "./detection-lines.js";
import { DrawnFile } from "./drawn-file.js";
import { GateWatch } from "./gate-watch.js";
import { onlyResting } from "./eligibility.js";
import { limitEvent, nativeSwitch, storedWindows, withNative, wrapUpRotation, type FailoverFacts } from "./limit-events.js";
import { NativeWaitPolicy } from "./native-wait.js";
import { PaidUsagePolicy, spendingLimit } from "./paid-usage.js";
import { paidSpending } from "../reader/paid-offer.js";
import { QuotaPolicy } from "./quota-policy.js";
import { QuotaWatch } from "./quota-watch.js";
import { recordQuota } from "./quota-store.js";
import type { Gate } from "../registry/gate.js";
import { ReceiverWatch, type ReceiverOutcome } from "./receiver.js";
import { RestWatch } from "./rest-watch.js";
import type { SharedReading } from "./shared-values.js";
import type { EntryRunEnd, EntryRunOptions, RunSettings } from "./run-options.js";
import { finishRun } from "./run-finish.js";
import type { Launch } from "./run-launch.js";
import { RunMachine, TRANSITIONS, type LimitProposals, type Move, type RunEventType, type RunState } from "./run-machine.js";
import { hostOptions } from "./run-host.js";
import type { LimitEvent } from "./result.js";
import { SwitchPolicy } from "./switch-policy.js";

// How long after the agent's own numbers say the allowance is gone the run is stopped on them alone, beyond the
// quiet time the printed message would have taken: the two, when both come, are one event.
const NATIVE_GRACE_MS = 500;

// What the title says while uuldana waits on the user in a state.
const TITLE_NOTES: Partial<Record<RunState, string>> = { asking: "waiting on its question", "signing-in": "waiting for its sign-in" };
// The moves journaled as state lines: those into and out of states no other journal line tells.
const TOLD_STATES: ReadonlySet<RunState> = new Set(["asking", "signing-in", "moving-on"]);

// One run of one entry, driven by its state machine: the host, the detector, the receiver and the policies report
// events, the machine's table decides each move, and this carries the move out (journal, rest, stop, switch).
export class RunEngine {
  readonly machine: RunMachine;
  private run!: Run;
  private readonly entry: string;
  private readonly facts: FailoverFacts;
  private readonly nativeWait: NativeWaitPolicy;
  private readonly paid: PaidUsagePolicy;
  // the agent's own words that it spends paid credits, once seen
  private spending: string | undefined;
  private readonly switcher: SwitchPolicy;
  private readonly quota: QuotaPolicy;
  private readonly drawn: DrawnFile;
  private receiver: ReceiverWatch | undefined;
  // what the run has opened: released by one call on every path
  private readonly owned = new Disposables();
  // the limit the machine is deciding on, and the one to settle at the next turn boundary
  private pending: { limit: LimitEvent; more: Record<string, unknown>; from?: { model: string; to: string } } | undefined;
  private atBoundary: LimitEvent | undefined;
  private candidates = 0;
  private receiverFailure: string | undefined;
  private stopping: Promise<unknown> | undefined;
  private cooldownWritten: Promise<unknown> | undefined;
  private lastJournaled = "";
  // the agent stopped for good while its limit was left to its own wait (its own line saying so, when it said it)
  private takenBack = false;
  private waitEnded: string | undefined;
  private startedAt = new Date();
  // a receiver that seemed to take the conversation, then asked to sign in
  private tookBack = false;
  private gateWatch: GateWatch | undefined;
  // the provider's limit phrases, compiled once, and the zone the agent's times are read in
  private readonly reading: { phrases: ReturnType<typeof compilePhrase>[]; timeZone: string };

  constructor(
    private readonly settings: RunSettings,
    private readonly options: EntryRunOptions,
    private readonly launch: Launch,
    private readonly hooks: ProviderHooks,
    private readonly gate: ((visible: readonly string[]) => Gate | undefined) | undefined,
  ) {
    this.entry = launch.report.entry;
    // a reset printed without a zone is read in the zone the agent's vendor prints in (the entry's, else its
    // manifest's), else the user's
    const timeZone = options.chosen.entry.timeZone ?? launch.manifest.time_zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
    this.reading = { phrases: (launch.manifest.limit_phrases ?? []).map(compilePhrase), timeZone };
    this.facts = { failover: options.failover, why: options.why };
    this.machine = new RunMachine(options.prompt ? "receiving" : "working", (move) => this.told(move));
    const entry = options.chosen.entry;
    this.nativeWait = new NativeWaitPolicy(launch.manifest, entry.nativeWait);
    this.paid = new PaidUsagePolicy(
      { policy: settings.paidUsage, unattended: settings.unattended, dismissSeconds: settings.dismissSeconds },
      (question, timeoutMs) => this.run.ask(question, timeoutMs),
    );
    this.switcher = new SwitchPolicy(launch.manifest, entry.switchModels === true, launch.restingModels, launch.model);
    this.quota = new QuotaPolicy({
      read: () => (hooks.hasQuota && this.machine.state !== "ended" ? hooks.quota(launch.quotaQuery) : undefined),
      keep: (reading) => this.keepReading(reading),
      threshold: entry.rotateAtPercentLeft ?? settings.rotateAtPercentLeft,
      facts: this.facts,
      cooldownMinutes: settings.cooldownMinutes,
      graceMs: settings.quietSeconds * 1000 + NATIVE_GRACE_MS,
      answered: () => this.receiver?.sign("quota"),
      propose: (event, limit) => this.propose(event, limit),
    });
    this.drawn = new DrawnFile(options.journal, `drawn-${options.runIndex}.txt`, () => this.run.drawnTail());
  }

  // Starts the agent and follows it to its end: the run's report and its part of the conversation.
  async start(): Promise<EntryRunEnd> {
    this.run = startRun(hostOptions(this.settings, this.options, this.launch, this.hooks, this.classify, this.callbacks(), this.hooks.hasTranscript ? this.recordOf : undefined));
    this.own();
    let ended: RunResult;
    try {
      // the agent's pid, and when it began (a reused pid began later): a later command can tell that it still runs.
      // Written once a crash of uuldana can stop the agent, so a journal that cannot be written (a full disk) stops it too
      this.options.journal.write("run-start", { ...this.launch.runStart, drawn_file: this.drawn.name, pid: this.run.agent.pid, pid_start: processStarted(this.run.agent.pid) ?? null });
      ended = await this.run.result;
      await this.ended(ended);
    } finally {
      this.owned.dispose();
    }
    return this.finish(ended);
  }

  // Everything the run opens once its agent runs, each taken into the one store released on every path (in reverse).
  private own(): void {
    const owned = this.owned;
    owned.add(() => restoreTerminal());
    owned.add(() => this.options.active(undefined));
    // the session told to stop (SIGTERM, SIGHUP or SIGINT to uuldana) stops the agent the graceful way, even when the
    // signal came just before this run started
    const stopped = this.options.stopped;
    const stopRun = (): void => void this.feed("signal");
    stopped.addEventListener("abort", stopRun);
    owned.add(() => stopped.removeEventListener("abort", stopRun));
    if (stopped.aborted) stopRun();
    this.options.active(this.run.agent.pid);
    this.startedAt = new Date();
    owned.add(() => this.drawn.close());
    owned.add(() => this.quota.close());
    const receiver = this.options.prompt ? this.newReceiver() : undefined;
    this.receiver = receiver;
    if (receiver) owned.add(() => receiver.close());
    if (this.hooks.hasQuota) {
      const watch = new QuotaWatch(this.hooks.quotaFiles(this.launch.quotaQuery), () => this.quota.changed());
      owned.add(() => watch.close());
    }
    const rests = this.restWatch();
    owned.add(() => rests.close());
    // readings of this account taken on other machines, heard through the shared store
    const shared = this.settings.shared;
    if (shared) owned.add(shared.onReading(accountOf(this.options.chosen.entry), (reading) => this.quota.heard(nativeOf(reading))));
    const gate = this.gate;
    if (gate) {
      const watch = new GateWatch(gate, () => this.run.screen.visible(), (seen) => this.atGate(seen));
      this.gateWatch = watch;
      owned.add(() => watch.close());
    }
  }

  // --- internal: events in ---

  // The one way an event reaches the machine; the move it makes is carried out here.
  private feed(event: RunEventType, proposals?: LimitProposals): Move | undefined {
    const move = this.machine.feed(event, proposals);
    if (move) this.perform(move);
    return move;
  }

  // A policy's proposal: taken only where the machine's state reacts to it.
  private propose(event: RunEventType, limit: LimitEvent): boolean {
    if (!TRANSITIONS[this.machine.state][event]) return false;
    this.pending = { limit, more: {} };
    return this.feed(event, proposalsOf(limit)) !== undefined;
  }

  private callbacks() {
    return {
      onDrawn: (lines: readonly string[]) => this.onDrawn(lines),
      onKey: () => void this.feed("keys"),
      onUserTurn: (text: string) => this.onUserTurn(text),
      onDetection: (event: DetectorEvent, drawn: DrawnAround) => this.onDetection(event, drawn),
    };
  }

  private onDrawn(lines: readonly string[]): void {
    this.drawn.soon();
    this.feed("drawn");
    this.spends(lines);
    this.ownAutomation(lines);
    const line = TRANSITIONS[this.machine.state]["own-switch"] ? this.nativeWait.ownSwitch(lines) : undefined;
    if (!line) return;
    const allowed = this.nativeWait.choice === "allow";
    this.pending = { limit: { ...nativeSwitch(line, this.settings.cooldownMinutes, this.facts), offer: { kind: "switch", choice: this.nativeWait.choice } }, more: {} };
    this.feed("own-switch", { switchModel: false, agentWaits: allowed, failover: this.facts.failover });
  }

  // The agent's own words that it spends paid credits: the title and the journal say so, once; where the user's
  // paid_usage does not let it spend (and another entry can take over), the session moves on at the next turn boundary.
  private spends(lines: readonly string[]): void {
    const line = this.spending ? undefined : paidSpending(lines);
    if (!line) return;
    this.spending = line;
    const allowed = this.settings.paidUsage === "allow" || this.launch.report.limit?.paid?.taken === true;
    this.options.journal.write("paid-spending", { entry: this.entry, text: this.options.redact(line), paid_usage: this.settings.paidUsage, allowed });
    if (!allowed && this.options.failover) this.propose("paid-spend", spendingLimit(line, this.settings.cooldownMinutes, this.settings.paidUsage));
    this.run.note("spending paid credits");
  }

  // The agent's own automation around its limit: its wait for the reset ended without it going on (the limit left to
  // that wait is taken back: the agent is stopped and the session moves on), or it was told to wrap up near its limit
  // (a warning: journaled, and with rotate_at_percent_left set, the session moves on at the next turn boundary).
  private ownAutomation(lines: readonly string[]): void {
    const ended = TRANSITIONS[this.machine.state]["wait-ended"] ? this.nativeWait.waitEnded(lines) : undefined;
    if (ended) {
      this.waitEnded = ended;
      this.options.journal.write("native-wait-ended", { entry: this.entry, text: this.options.redact(ended) });
      this.feed("wait-ended");
    }
    const wrapUp = this.nativeWait.wrapUp(lines);
    if (!wrapUp) return;
    const threshold = this.options.chosen.entry.rotateAtPercentLeft ?? this.settings.rotateAtPercentLeft;
    const rotates = threshold !== undefined && this.options.failover;
    this.options.journal.write("wrap-up", { entry: this.entry, text: this.options.redact(wrapUp), rotates });
    if (rotates) this.propose("native-low", wrapUpRotation(wrapUp, threshold, this.settings.cooldownMinutes));
  }

  private onUserTurn(text: string): void {
    this.options.journal.write("user", { entry: this.entry, text });
    // the conversation so far is kept current at each turn, in a file of its own
    void this.run.screen.read({ conversation: true }).then(({ conversation }) => {
      if (conversation) this.options.journal.save(`conversation-${this.options.runIndex}.txt`, conversation + "\n");
    });
  }

  // Every candidate is journaled as it is seen, with the lines around it; its outcome likewise; then the machine hears it.
  private onDetection(event: DetectorEvent, drawn: DrawnAround): void {
    if (event.type === "stop") return this.onStop(event, { score: event.verdict.score, candidate: this.candidates, lines_after: drawn.after });
    if (event.type === "candidate" || event.type === "refused") this.candidates++;
    journalDetection(this.options.journal, { entry: this.entry, candidate: this.candidates, settings: this.settings, redact: this.options.redact }, event, drawn);
    // a stop by its words that who spoke refused: journaled with its facts, and the agent goes on untouched
    if (event.type === "refused") return;
    if (event.type !== "left") this.drawn.save();
    if (event.type === "dismissed") {
      this.launch.report.ignored.push({ at: event.at, text: event.text });
      this.run.warn(true);
    }
    this.feed(event.type);
  }

  // A stop the detector read: what each policy proposes for it, and the machine's choice.
  private onStop(event: Extract<DetectorEvent, { type: "stop" }>, more: Record<string, unknown>): void {
    if (!TRANSITIONS[this.machine.state].limit) return;
    const offer = event.after === "failing exit" ? undefined : this.nativeWait.offer(this.run.screen.visible());
    // the agent's own numbers, when they say the same, make the one event native, with the printed text beside them
    const native = this.quota.exhausted();
    const printed = limitEvent(event, this.settings.cooldownMinutes, this.facts);
    const limit = native ? withNative(printed, native, this.settings.cooldownMinutes) : printed;
    // a limit of one model: another model of the same agent first, when the entry asks for it
    const from = event.after !== "failing exit" && !this.launch.report.limit ? this.switcher.proposal(limit) : undefined;
    const offered = this.nativeWait.offered(limit, offer);
    // an offer of paid usage goes the user's paid_usage road first (asking the user may take a while)
    const paid = event.after === "failing exit" ? undefined : this.paid.offerAt(offered, this.run.screen.visible());
    if (!paid) return this.decide(offered, more, from);
    const next = this.options.rows.find((row) => row.eligible && row.entry.key !== this.entry)?.entry.key;
    void this.paid.road(offered, paid, { entry: this.entry, next: this.options.failover ? next : undefined }).then((road) => this.decide(road, more, road.paid?.taken ? undefined : from));
  }

  // The machine hears the limit, with what each policy proposes for it.
  private decide(limit: LimitEvent, more: Record<string, unknown>, from: { model: string; to: string } | undefined): void {
    if (!TRANSITIONS[this.machine.state].limit) return;
    this.pending = { limit, more, from };
    this.feed("limit", { ...proposalsOf(limit), switchModel: from !== undefined });
  }

  // --- internal: moves out ---

  private perform(move: Move): void {
    switch (move.effect) {
      case "look":
        this.receiver?.drawn();
        this.switcher.drawn();
        if (!this.receiver || this.receiver.decided) this.gateWatch?.look();
        return;
      case "renew":
        this.receiver?.typed();
        return;
      case "switch-model":
        void this.switchModel();
        return;
      case "leave-to-agent":
      case "fail-over":
      case "keep-running":
        this.settle(this.pending!.limit, this.pending!.more);
        return;
      case "note-own-switch":
        this.options.journal.write("native-switch", { entry: this.entry, text: this.pending!.limit.text, native_wait: "allow" });
        return;
      case "await-boundary":
        this.atBoundary = this.pending!.limit;
        void this.run.atTurnBoundary(this.settings.quietSeconds * 1000).then(() => void this.feed("turn-boundary"));
        return;
      case "move-on":
        this.settle(this.atBoundary!);
        return;
      case "stop":
        this.stopping ??= this.run.stop();
        return;
      case "take-back":
        this.takenBack = true;
        return;
      case "take-back-stop":
        this.takenBack = true;
        this.stopping ??= this.run.stop();
        return;
      case "note":
      case "none":
      case "arbitrate":
        return;
    }
  }

  // Moves no other journal line tells are journaled as state lines; a state the user is waited on in says so in the
  // title.
  private told(move: Move): void {
    const toldElsewhere = !TOLD_STATES.has(move.to) && !TOLD_STATES.has(move.from) && move.event !== "sign-in-late";
    if (move.from === move.to || toldElsewhere) return;
    this.options.journal.write("state", { entry: this.entry, from: move.from, to: move.to, why: move.why });
    if (move.to === "ended") return;
    this.run.note(TITLE_NOTES[move.to]);
  }

  // The one place a limit event is settled, printed or native: journaled, the entry rested, the agent stopped.
  private settle(limit: LimitEvent, more: Record<string, unknown> = {}): void {
    const report = this.launch.report;
    report.limit = limit;
    this.quota.close();
    if (limit.reason === "home") {
      // nothing ran out: the entry does not rest
      this.options.journal.write("home", { entry: this.entry, to: limit.home!.entry, rested_until: limit.home!.until, text: limit.text });
      this.stopping = this.run.stop();
      return;
    }
    this.options.journal.write("limit", limitLine(this.entry, limit, more));
    this.drawn.save();
    // the rest another session wrote is in the table already; an agent left to spend paid usage rests not at all
    if (limit.reason === "shared-rest" || limit.paid?.taken) limit.rested = limit.reason === "shared-rest";
    else {
      this.cooldownWritten = this.rest({ until: limit.restsUntil, source: limit.source, kind: limit.kind, text: limit.text }).then((write) => {
        limit.rested = write.written;
        limit.cooldownNotice = write.notice;
      });
    }
    if (limit.action === "failover") this.stopping = this.run.stop();
    if (limit.action === "left to the agent") this.run.readOn();
  }

  // The in-place switch the machine chose: journaled, tried, and on success the model left rests and the agent goes
  // on; on failure the limit takes its course, which the machine decides again without a switch.
  private async switchModel(): Promise<void> {
    const { limit, from } = this.pending!;
    const journal = this.options.journal;
    journal.write("switch", { entry: this.entry, from: from!.model, to: from!.to, text: limit.text });
    const over = (): boolean => this.machine.state !== "switching";
    const run = { visible: () => this.run.screen.visible(), write: (data: string) => this.run.agent.write(data), busy: (visible: readonly string[]) => this.hooks.busy(visible), classify: this.classify, over };
    const failed = await this.switcher.switchTo(run, { seconds: this.settings.receiverSeconds, quietMs: this.settings.quietSeconds * 1000 }, from!.model, from!.to);
    if (over()) return;
    if (failed) {
      journal.write("switch-failed", { entry: this.entry, from: from!.model, to: from!.to, reason: failed });
      this.feed("switch-failed", proposalsOf(limit));
      return;
    }
    this.launch.report.switches.push({ from: from!.model, to: from!.to, restsUntil: limit.restsUntil });
    journal.write("switched", { entry: this.entry, from: from!.model, to: from!.to, reset_at: limit.resetAt });
    this.cooldownWritten = Promise.all([this.cooldownWritten, this.rest({ until: limit.restsUntil, source: limit.source, kind: "per-model", text: limit.text, model: from!.model })]);
    // the agent goes on: its next limit counts again
    this.run.readOn();
    this.feed("switch-took");
  }

  // A rest in the cooldown table (the entry's account's, or one model's), its text redacted, journaled once written or
  // saved. Waits at most a second for another writer; a rest not written then is saved beside the table at once. With a
  // shared store, the rest goes there next, waited for at most 250 ms (shared-rests.ts).
  private rest(row: Omit<Cooldown, "since">): Promise<CooldownWrite> {
    const account = accountOf(this.options.chosen.entry);
    const key = row.model ? modelKey(account, row.model) : account;
    const rest: Cooldown = { ...row, since: new Date(), text: row.text === undefined ? undefined : this.options.redact(row.text) };
    return recordRests(this.settings.dataDir, new Map([[key, rest]])).then(async (write) => {
      const model = row.model ? { model: row.model } : {};
      const entry = row.model ? modelKey(this.entry, row.model) : this.entry;
      this.options.journal.write("cooldown", { entry, account, ...model, until: row.until.toISOString(), ...(write.written ? {} : { written: false }), ...(write.saved ? { saved: basename(write.saved) } : {}), ...(write.notice ? { notice: write.notice } : {}) });
      await this.settings.shared?.shareRest(key, rest);
      return write;
    });
  }

  // The reader for this run: the general reader with the provider's wording (compiled once), models and classifier.
  private readonly classify = (text: string): Verdict =>
    classifyText(text, { now: new Date(), timeZone: this.reading.timeZone, locale: this.launch.locale, phrases: this.reading.phrases, models: this.options.models, provider: this.hooks.classify });

  // The turn of the agent's own records a line it drew stands in: its assistant's answer or a tool's output, in the
  // turn under way (a limit the agent itself reports is kept out of its records' turns by its adapter). Read when a
  // stop is seen, only.
  private readonly recordOf = (line: string): "agent" | "tool" | undefined => {
    const words = squeezed(line);
    if (words.length < 12) return undefined;
    // the turn under way: what the agent wrote since the user's last words (an earlier answer that quoted the same
    // message says nothing of a notice drawn now)
    const turns = this.transcriptNow()?.turns ?? [];
    const turn = turns.slice(turns.findLastIndex((candidate) => candidate.role === "user") + 1).find((candidate) => squeezed(candidate.text).includes(words));
    return turn ? (turn.role === "tool" ? "tool" : "agent") : undefined;
  };

  // A quota reading: the entry's latest kept in the data dir, a change in the journal.
  private keepReading(reading: NativeQuota): void {
    const kept = { entry: this.entry, at: new Date(), source: this.launch.manifest.quota?.source ?? "adapter", windows: storedWindows(reading) };
    recordQuota(this.settings.dataDir, kept);
    const said = JSON.stringify(reading);
    if (said === this.lastJournaled) return;
    this.lastJournaled = said;
    // a changed reading goes to the shared store too: sessions elsewhere on this account rotate before the wall
    this.settings.shared?.shareReading({ account: accountOf(this.options.chosen.entry), at: kept.at, source: kept.source, windows: kept.windows });
    this.options.journal.write("quota", { entry: this.entry, windows: reading.windows, ...(reading.exhausted ? { exhausted: reading.exhausted } : {}) });
  }

  // --- internal: watchers ---

  // What a look at the screen's gate found: a first agent at its sign-in screen is left to the user, and the run says
  // so; one handed the conversation that asks to sign in once it seemed to take it is left like a receiver at its
  // sign-in screen (an undecided receiver looks for itself).
  private atGate(gate: Gate | undefined): void {
    const signIn = gate?.kind === "sign-in";
    if (signIn && this.receiver?.decided?.took) this.signedOut(gate.line);
    else if (signIn && this.machine.state === "working") this.feed("sign-in");
    else if (!signIn && this.machine.state === "signing-in") this.feed("signed-in");
  }

  // A run handed the conversation asks to sign in after all: stopped, not rested, and not tried again this session.
  private signedOut(line: string): void {
    if (this.feed("sign-in-late")?.effect !== "stop") return;
    const command = this.launch.manifest.sign_in?.command;
    const reason = `it asks to sign in${command ? `: run "${command}"` : ""}`;
    this.receiverFailure = oneLine({ took: false, reason, lines: [], signIn: line }, this.options.redact);
    this.launch.report.signIn = reason;
    this.tookBack = true;
  }

  // The agent's own records of this run as they stand now, through its adapter.
  private transcriptNow(): ReturnType<ProviderHooks["transcript"]> {
    const { launch, options } = this;
    return this.hooks.transcript({ cwd: this.settings.cwd, env: launch.env, started: this.startedAt, ended: new Date(), sessionId: launch.sessionId, prompt: options.prompt });
  }

  // An agent handed the conversation must show that it took it; one that does not in time, or that asks to sign in,
  // is stopped and the walk goes on to the next entry (it did not hit a limit: it does not rest).
  private newReceiver(): ReceiverWatch {
    const { hooks, launch, options } = this;
    const firstLine = options.prompt!.split("\n")[0]!;
    const transcriptTurn = (): boolean =>
      hooks.hasTranscript && this.transcriptNow()?.turns.some((turn) => turn.role === "user" && turn.text.includes(firstLine)) === true;
    return new ReceiverWatch({
      seconds: this.settings.receiverSeconds,
      prompt: options.prompt!,
      signInCommand: launch.manifest.sign_in?.command,
      signs: { screen: () => this.run.screen.read({ conversation: true }), busy: (visible) => hooks.busy(visible), transcriptTurn, ...(this.gate ? { gate: this.gate } : {}) },
      asking: () => void this.feed("question"),
      decided: (outcome) => this.received(outcome),
    });
  }

  private received(outcome: ReceiverOutcome): void {
    const lines = outcome.took ? {} : { reason: outcome.reason, lines: this.options.redactLines(outcome.lines), ...(outcome.signIn ? { sign_in: true } : {}) };
    this.options.journal.write("receiver", { entry: this.entry, took: outcome.took, ...(outcome.took ? { by: outcome.by, after_ms: outcome.afterMs } : lines) });
    if (outcome.took) return void this.feed("took");
    const move = this.feed(outcome.signIn ? "sign-in" : "not-taken");
    if (move?.effect !== "stop") return;
    this.receiverFailure = oneLine(outcome, this.options.redact);
    if (outcome.signIn) this.launch.report.signIn = outcome.reason;
  }

  // Rests written elsewhere (when another entry can take over) and entries higher in the list coming back (return_home).
  private restWatch(): RestWatch {
    const chosen = this.options.chosen;
    const home = this.settings.returnHome
      ? this.options.rows.filter((row) => row.order < chosen.order && onlyResting(row)).map((row) => ({ entry: row.entry.key, account: accountOf(row.entry), until: row.restingUntil! }))
      : [];
    return new RestWatch({
      dataDir: this.settings.dataDir,
      account: accountOf(chosen.entry),
      model: () => this.switcher.current,
      home,
      shared: this.options.failover,
      cooldownMinutes: this.settings.cooldownMinutes,
      propose: (event, limit) => this.propose(event, limit),
    });
  }

  // --- internal: the end ---

  // The agent has ended: stops and rests under way finish, and a receiver that never decided is decided now.
  private async ended(ended: RunResult): Promise<void> {
    this.feed(ended.exitCode !== 0 || ended.signal ? "failing-exit" : "exit");
    await this.stopping;
    await this.cooldownWritten;
    // an agent that exited by itself before it took the conversation (and before the user typed to it) failed to start
    const receiver = this.receiver;
    if (receiver && !receiver.decided && !this.launch.report.limit && !ended.typed) {
      const how = ended.signal ? `was killed by signal ${ended.signal}` : `exited with status ${ended.exitCode}`;
      const outcome = await receiver.exited(how);
      if (!outcome.took) this.receiverFailure = oneLine(outcome, this.options.redact);
    }
  }

  private finish(ended: RunResult): EntryRunEnd {
    this.drawn.save();
    const report = this.launch.report;
    // a limit left to the agent's own wait: the agent exiting with a failing status meanwhile has stopped for good
    if (this.takenBack && report.limit?.action === "left to the agent" && !this.options.stopped.aborted && this.options.failover) {
      report.limit.action = "failover";
      const exited = ended.signal ? `it was killed by signal ${ended.signal}` : `it exited with status ${ended.exitCode}`;
      this.options.journal.write("limit-taken-back", { entry: this.entry, why: this.waitEnded ? `its own wait ended: ${this.options.redact(this.waitEnded)}` : exited });
    }
    return finishRun(ended, {
      launch: this.launch,
      hooks: this.hooks,
      journal: this.options.journal,
      runIndex: this.options.runIndex,
      cwd: this.settings.cwd,
      startedAt: this.startedAt,
      aborted: this.options.stopped.aborted,
      receiverFailure: this.receiverFailure,
      took: this.receiver ? !this.tookBack && (this.receiver.decided?.took ?? false) : undefined,
      redact: this.options.redact,
    });
  }
}

// What a limit's own action says the policies propose: the agent's own wait, or another entry.
function proposalsOf(limit: LimitEvent): LimitProposals {
  return { switchModel: false, agentWaits: limit.action === "left to the agent", failover: limit.action === "failover" };
}

// The limit journal line.
function limitLine(entry: string, limit: LimitEvent, more: Record<string, unknown>): Record<string, unknown> {
  return {
    entry,
    source: limit.source,
    reason: limit.reason,
    text: limit.text,
    kind: limit.kind,
    reset_at: limit.resetAt,
    after: limit.after,
    ...(limit.window ? { window: limit.window.name, percent_left: limit.window.percentLeft, threshold: limit.window.threshold } : {}),
    ...(limit.offer ? { offer: limit.offer.kind, native_wait: limit.offer.choice, action: limit.action } : {}),
    ...(limit.paid ? { paid_offer: true, offered: limit.paid.offer, paid_usage: limit.paid.policy, ...(limit.paid.answer ? { answer: limit.paid.answer } : {}), action: limit.action } : {}),
    ...more,
  };
}

// A receiver that did not take the conversation, in one line: why, and the line its screen asked to sign in with, else
// the last line its screen showed.
function oneLine(failure: Extract<ReceiverOutcome, { took: false }>, redact: (text: string) => string): string {
  const line = (failure.signIn ?? failure.lines.at(-1))?.trim();
  const said = failure.signIn ? "its screen says" : "its screen ends";
  const shown = line ? `; ${said} "${escapeControls(redact(line)).replace(/\s+/g, " ").slice(0, 100)}"` : "";
  return `${failure.reason}${shown}`;
}

// a text's words only, for finding a drawn line in the agent's records: its glyphs, marks and spacing left out
function squeezed(text: string): string {
  return text.replace(/[^\p{L}\p{N}]+/gu, " ").trim().toLowerCase();
}

// A reading heard from the shared store, as the agent's own numbers read.
function nativeOf(reading: SharedReading): NativeQuota {
  return { windows: reading.windows.map((window) => ({ name: window.name, usedPercent: window.usedPercent, ...(window.resetsAt ? { resetsAt: window.resetsAt.toISOString() } : {}), ...(window.windowMinutes ? { windowMinutes: window.windowMinutes } : {}) })) };
}
