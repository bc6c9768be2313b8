import { escapeControls } from "../base/safe-text.js";
import { copyTurns, isTurnList, loadAdapter, type HookName, type NativeQuota, type ProviderVerdict, type QuotaQuery, type Transcript, type TranscriptQuery, type Turn } from "./adapter.js";
import { openAdapterThread, type ThreadAnswer, type ThreadEvent } from "./adapter-thread.js";
import { compileLinePatterns } from "./patterns.js";
import { packOf, type ManifestRecord } from "./types.js";

// One provider as a run uses it: the manifest's line patterns and ready pattern together with its adapter's hooks.
// Hooks run on the output path, so each is guarded: one that throws or returns the wrong shape, misses a thread's
// deadline, or is measured slower than the budget in two calls in a row, is reported once and turned off for the
// session, and the general behaviour carries on.
// uuldana's own adapters run in this thread; any other (a pack's, a drop-in's) in a thread of its own, where each call
// has a hard deadline (adapter-thread.ts): one that never returns or ends its thread turns the whole adapter off.

// How long one call of a hook may take before the hook is turned off, unless the session says otherwise.
export const HOOK_BUDGET_MS = 50;

// How long the transcript hook may take: it is called once, when a run ends, and reads a file.
export const TRANSCRIPT_BUDGET_MS = 3000;

// How long a quota hook may take: it runs when a watched file changed, not on the output path, and reads a file.
export const QUOTA_BUDGET_MS = 1000;

// The hooks, always present and never throwing; each falls back to the manifest or to "no opinion".
export interface ProviderHooks {
  // the adapter's verdict on text the agent drew, checked and copied; undefined when it has none
  classify(text: string): ProviderVerdict | undefined;
  // the manifest's chrome patterns, or else the adapter's chrome hook
  chrome(line: string): boolean;
  // a line matching the manifest's busy patterns, or else the adapter's busy hook
  busy(screen: readonly string[]): boolean;
  // the adapter's reading of the turns; undefined when it has none
  conversation(screenText: string): Turn[] | undefined;
  // the adapter's ready hook, or else the manifest's prompt.ready pattern on the screen's lines; undefined with neither
  ready(screen: readonly string[]): boolean | undefined;
  // the run's conversation from the agent's own session file; undefined when the adapter has none or finds none
  transcript(query: TranscriptQuery): Transcript | undefined;
  // whether the adapter reads transcripts at all
  readonly hasTranscript: boolean;
  // the settings the run starts with, when the adapter gives some
  launchSettings(query: QuotaQuery): Record<string, unknown> | undefined;
  // the files to watch for quota readings (none without the hook), and the latest reading, checked and copied
  quotaFiles(query: QuotaQuery): string[];
  quota(query: QuotaQuery): NativeQuota | undefined;
  // whether the adapter reads the agent's own quota at all, and names files to watch for it
  readonly hasQuota: boolean;
  readonly hasQuotaFiles: boolean;
  // at a run's end: tells now what a call left behind came to (its late answer, or a hook that did not return), so that
  // the run's report has it; the hooks still answer after, for the conversation handed on
  settle(): void;
  // ends the adapter's thread, when it has one; the hooks answer nothing after
  close(): void;
}

// A hook that was turned off, as flat facts.
export interface HookProblem {
  provider: string;
  // the pack the provider came from ("<name>@<version>"), when it came from one
  pack?: string;
  // the hook at fault; none when the adapter's thread ended between calls
  hook?: HookName;
  // it threw, it returned something of the wrong shape, or one call took longer than the budget; or, in an adapter's
  // own thread, a call had not returned by the budget and the grace after it, or the adapter ended its thread
  // (process.exit, a throw outside any hook): these two turn the whole adapter off
  failure: "threw" | "returned" | "slow" | "hung" | "exited";
  // what it threw, what it returned and what was expected, or what it did, as one line
  message: string;
  durationMs: number;
  budgetMs: number;
}

export interface ProviderOptions {
  // called once per hook that is turned off; it must not throw
  report(problem: HookProblem): void;
  budgetMs?: number;
  // milliseconds, for measuring each call (performance.now unless a test injects one)
  clock?: () => number;
  // where the adapter runs: uuldana's own in this thread, any other in a thread of its own, unless a test says
  where?: "in-process" | "thread";
  // open the provider as if its manifest named no adapter (its adapter would not load)
  withoutAdapter?: boolean;
}

// Where an adapter runs unless told: only uuldana's own code shares uuldana's thread, where a call costs nothing more
// than the call; code from a pack or the user's providers folder gets a thread of its own and hard deadlines.
export function adapterPlace(record: ManifestRecord): "in-process" | "thread" {
  return record.source === "built-in" ? "in-process" : "thread";
}

// Opens a provider for one session: imports its adapter, if its manifest names one, and compiles its patterns. An
// adapter that will not load is E_ADAPTER_LOAD or E_ADAPTER_INVALID.
export async function openProvider(record: ManifestRecord, options: ProviderOptions): Promise<ProviderHooks> {
  const manifest = record.manifest;
  if (!manifest) throw record.error ?? new Error(`${record.file} holds no valid manifest`);
  const budgetMs = options.budgetMs ?? HOOK_BUDGET_MS;
  const clock = options.clock ?? (() => performance.now());
  const off = new Set<HookName>();
  // the hooks whose last call was measured slower than the budget though it answered: one such call on a busy machine
  // is the machine's, a second one in a row is the hook's, and turns it off (a call that misses a thread's hard
  // deadline turns its hook off at once)
  const strikes = new Set<HookName>();
  const pack = packOf(record.source);
  const report = (problem: Omit<HookProblem, "provider" | "pack">): void => options.report({ provider: manifest.id, ...(pack ? { pack } : {}), ...problem });
  const runner = await openRunner(record, options, (event) => report(threadProblem(event, off)));

  // One guarded call: the hook's checked result, or undefined when it has none, is off, or has just been turned off.
  const call = <T>(hook: HookName, argument: unknown, check: (value: unknown) => Checked<T>, budget = budgetMs): { value: T } | undefined => {
    if (!runner.has(hook) || off.has(hook)) return undefined;
    const started = clock();
    const answer = runner.run(hook, argument, budget);
    const durationMs = clock() - started;
    // left behind at the deadline: told when it comes back or its thread is ended
    if ("late" in answer) off.add(hook);
    if ("late" in answer || "busy" in answer || "ended" in answer) return undefined;
    let outcome: Checked<T> | { threw: string };
    try {
      outcome = "value" in answer ? check(answer.value) : "threw" in answer ? { threw: oneLine(answer.threw) } : { wrong: oneLine(answer.wrong) };
    } catch (error) {
      outcome = { threw: oneLine(error instanceof Error ? error.message : String(error)) };
    }
    if ("value" in outcome && durationMs <= budget) {
      strikes.delete(hook);
      return outcome;
    }
    if ("value" in outcome && strike(strikes, hook)) return outcome;
    off.add(hook);
    const failure = "threw" in outcome ? "threw" : "wrong" in outcome ? "returned" : "slow";
    const message = "threw" in outcome ? outcome.threw : "wrong" in outcome ? outcome.wrong : `took ${Math.round(durationMs)} ms`;
    report({ hook, failure, message, durationMs: Math.round(durationMs), budgetMs: budget });
    // a slow call's answer is still a good answer
    return "value" in outcome ? outcome : undefined;
  };
  return guardedHooks(manifest, call, runner, budgetMs);
}

// The one line users see when a hook is turned off.
export function formatHookProblem(problem: HookProblem): string {
  const what = {
    threw: `threw (${problem.message})`,
    returned: `returned ${problem.message}`,
    slow: `took ${problem.durationMs} ms (the budget is ${problem.budgetMs} ms)`,
    hung: `did not return (the budget is ${problem.budgetMs} ms)`,
    exited: problem.message,
  }[problem.failure];
  const whole = problem.failure === "hung" || problem.failure === "exited";
  const pack = problem.pack ? ` (pack ${escapeControls(problem.pack)})` : "";
  const who = problem.hook ? `its ${problem.hook} hook` : "its adapter";
  return `uuldana: provider "${escapeControls(problem.provider)}"${pack}: ${who} ${what}; uuldana ${whole ? "turned its adapter off and carries on without it" : "carries on without it"}`;
}

// The one line users see when a provider's adapter would not load and the session runs it without one.
export function formatAdapterOff(error: Error): string {
  return `uuldana: ${escapeControls(error.message)}; uuldana carries on without it`;
}

// --- internal ---

type Call = <T>(hook: HookName, argument: unknown, check: (value: unknown) => Checked<T>, budget?: number) => { value: T } | undefined;

// The hooks as a run calls them: the manifest's patterns first where it has them, then the adapter's guarded calls.
function guardedHooks(manifest: NonNullable<ManifestRecord["manifest"]>, call: Call, runner: Runner, budgetMs: number): ProviderHooks {
  const chromeLine = compileLinePatterns(manifest.chrome ?? []);
  const busyLine = compileLinePatterns(manifest.busy ?? []);
  const readyPattern = manifest.prompt?.ready ? new RegExp(manifest.prompt.ready, "m") : undefined;
  return {
    classify: (text) => call("classify", text, checkVerdict)?.value,
    chrome: (line) => chromeLine(line) || (call("chrome", line, checkBoolean)?.value ?? false),
    busy: (screen) => screen.some((line) => busyLine(line)) || (call("busy", screen, checkBoolean)?.value ?? false),
    conversation: (screenText) => call("conversation", screenText, checkTurns)?.value,
    ready: (screen) => {
      const hooked = call("ready", screen, checkBoolean);
      if (hooked) return hooked.value;
      return readyPattern ? readyPattern.test(screen.join("\n")) : undefined;
    },
    transcript: (query) => call("transcript", query, checkTranscript, Math.max(budgetMs, TRANSCRIPT_BUDGET_MS))?.value,
    hasTranscript: runner.has("transcript"),
    launchSettings: (query) => call("launchSettings", query, checkSettings, Math.max(budgetMs, QUOTA_BUDGET_MS))?.value,
    quotaFiles: (query) => call("quotaFiles", query, checkFiles, Math.max(budgetMs, QUOTA_BUDGET_MS))?.value ?? [],
    quota: (query) => call("quota", query, checkQuota, Math.max(budgetMs, QUOTA_BUDGET_MS))?.value,
    hasQuota: runner.has("quota"),
    hasQuotaFiles: runner.has("quotaFiles"),
    settle: () => runner.settle(),
    close: () => runner.close(),
  };
}

// The adapter's hooks, wherever they run: whether it gives one, one call of it, and the end of it.
interface Runner {
  has(hook: HookName): boolean;
  run(hook: HookName, argument: unknown, budgetMs: number): ThreadAnswer;
  settle(): void;
  close(): void;
}

async function openRunner(record: ManifestRecord, options: ProviderOptions, events: (event: ThreadEvent) => void): Promise<Runner> {
  const none: Runner = { has: () => false, run: () => ({ ended: true }), settle: () => undefined, close: () => undefined };
  if (!record.manifest?.adapter || options.withoutAdapter) return none;
  if ((options.where ?? adapterPlace(record)) === "thread") {
    const thread = await openAdapterThread(record, events);
    return {
      has: (hook) => thread.hooks.includes(hook),
      run: (hook, argument, budgetMs) => thread.call(hook, argument, budgetMs),
      settle: () => thread.settle(),
      close: () => thread.close(),
    };
  }
  const adapter = (await loadAdapter(record)) as unknown as Record<HookName, ((this: unknown, argument: unknown) => unknown) | undefined>;
  return {
    has: (hook) => typeof adapter[hook] === "function",
    run: (hook, argument) => {
      try {
        return { value: adapter[hook]!.call(adapter, argument) };
      } catch (error) {
        return { threw: error instanceof Error ? error.message : String(error) };
      }
    },
    settle: () => undefined,
    close: () => undefined,
  };
}

// A hook's first slow call in a row, counted (true); false when it had one already.
function strike(strikes: Set<HookName>, hook: HookName): boolean {
  if (strikes.has(hook)) return false;
  strikes.add(hook);
  return true;
}

// What the adapter's thread told after a call was left behind, or when it ended, as a problem to report.
function threadProblem(event: ThreadEvent, off: Set<HookName>): Omit<HookProblem, "provider" | "pack"> {
  if (event.kind === "slow") return { hook: event.hook, failure: "slow", message: `took ${event.durationMs} ms`, durationMs: event.durationMs, budgetMs: event.budgetMs };
  if (event.hook) off.add(event.hook);
  if (event.kind === "hung") return { hook: event.hook, failure: "hung", message: `did not return within ${event.waitedMs} ms`, durationMs: event.waitedMs, budgetMs: event.budgetMs };
  return { ...(event.hook ? { hook: event.hook } : {}), failure: "exited", message: oneLine(event.what), durationMs: 0, budgetMs: 0 };
}

type Checked<T> = { value: T } | { wrong: string };

const VERDICT_KEYS = ["stop", "kind", "reset_at", "reason"];

function checkVerdict(value: unknown): Checked<ProviderVerdict | undefined> {
  if (value === undefined) return { value: undefined };
  const expected = "not undefined or a verdict ({ stop, kind?, reset_at?, reason? })";
  if (!isPlainObject(value)) return { wrong: `${show(value)}, ${expected}` };
  const unknown = Object.keys(value).find((key) => !VERDICT_KEYS.includes(key));
  if (unknown) return { wrong: `${show(value)}, whose "${unknown}" is not part of a verdict ({ stop, kind?, reset_at?, reason? })` };
  if (typeof value.stop !== "boolean") return { wrong: `${show(value)}, whose stop is not true or false` };
  for (const key of ["kind", "reason"] as const) {
    if (value[key] != null && typeof value[key] !== "string") return { wrong: `${show(value)}, whose ${key} is not text` };
  }
  const reset = value.reset_at;
  if (reset != null && (typeof reset !== "string" || Number.isNaN(Date.parse(reset)))) {
    return { wrong: `${show(value)}, whose reset_at is not a date and time (such as "2026-12-05T08:00:00Z")` };
  }
  return {
    value: {
      stop: value.stop,
      ...(value.kind != null ? { kind: value.kind as string } : {}),
      ...(reset != null ? { reset_at: new Date(reset as string).toISOString() } : {}),
      ...(value.reason != null ? { reason: value.reason as string } : {}),
    },
  };
}

function checkBoolean(value: unknown): Checked<boolean> {
  return typeof value === "boolean" ? { value } : { wrong: `${show(value)}, not true or false` };
}

function checkTurns(value: unknown): Checked<Turn[] | undefined> {
  if (value === undefined) return { value: undefined };
  if (!isTurnList(value)) return { wrong: `${show(value)}, not undefined or a list of turns ({ role: "user", "agent" or "tool", text })` };
  return { value: copyTurns(value) };
}

function checkTranscript(value: unknown): Checked<Transcript | undefined> {
  if (value === undefined) return { value: undefined };
  const expected = 'not undefined or a transcript ({ file, turns: [{ role: "user", "agent" or "tool", text }] })';
  if (!isPlainObject(value) || typeof value.file !== "string" || !isTurnList(value.turns)) return { wrong: `${show(value)}, ${expected}` };
  return { value: { file: value.file, turns: copyTurns(value.turns) } };
}



function checkSettings(value: unknown): Checked<Record<string, unknown> | undefined> {
  if (value === undefined) return { value: undefined };
  if (!isPlainObject(value)) return { wrong: `${show(value)}, not undefined or an object of settings` };
  try {
    return { value: JSON.parse(JSON.stringify(value)) as Record<string, unknown> };
  } catch {
    return { wrong: "settings that are not JSON" };
  }
}

function checkFiles(value: unknown): Checked<string[]> {
  return Array.isArray(value) && value.every((file) => typeof file === "string") ? { value: [...value] } : { wrong: `${show(value)}, not a list of file names` };
}

function checkQuota(value: unknown): Checked<NativeQuota | undefined> {
  if (value === undefined) return { value: undefined };
  const expected = "not undefined or a reading ({ windows: [{ name, usedPercent, resetsAt?, windowMinutes? }], exhausted? })";
  if (!isPlainObject(value) || !Array.isArray(value.windows)) return { wrong: `${show(value)}, ${expected}` };
  const windows: NativeQuota["windows"] = [];
  for (const window of value.windows as unknown[]) {
    if (!isPlainObject(window) || typeof window.name !== "string" || typeof window.usedPercent !== "number" || !Number.isFinite(window.usedPercent)) {
      return { wrong: `${show(value)}, ${expected}` };
    }
    const resetsAt = typeof window.resetsAt === "string" && !Number.isNaN(Date.parse(window.resetsAt)) ? new Date(window.resetsAt).toISOString() : undefined;
    windows.push({ name: window.name, usedPercent: window.usedPercent, ...(resetsAt ? { resetsAt } : {}), ...(typeof window.windowMinutes === "number" ? { windowMinutes: window.windowMinutes } : {}) });
  }
  const gone = isPlainObject(value.exhausted) ? value.exhausted : undefined;
  const reset = typeof gone?.reset_at === "string" && !Number.isNaN(Date.parse(gone.reset_at)) ? new Date(gone.reset_at).toISOString() : undefined;
  return {
    value: {
      windows,
      ...(gone
        ? { exhausted: { ...(typeof gone.kind === "string" ? { kind: gone.kind } : {}), ...(reset ? { reset_at: reset } : {}), ...(typeof gone.text === "string" ? { text: gone.text } : {}) } }
        : {}),
    },
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && [Object.prototype, null].includes(Object.getPrototypeOf(value));
}

// A value a hook returned, as a short line: hooks are synchronous, so a promise is named as one.
function show(value: unknown): string {
  if (typeof (value as { then?: unknown } | null)?.then === "function") {
    (value as Promise<unknown>).then(undefined, () => undefined);
    return "a promise (hooks are synchronous)";
  }
  if (typeof value === "function") return "a function";
  if (value === undefined) return "undefined";
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return oneLine(text);
}

function oneLine(text: string): string {
  const line = escapeControls(text.split("\n")[0]!);
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
