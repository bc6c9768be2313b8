import { escapeControls } from "../base/safe-text.js";
import { copyTurns, isTurnList, loadAdapter, type HookName, type NativeQuota, type ProviderAdapter, type ProviderVerdict, type QuotaQuery, type Transcript, type TranscriptQuery, type Turn } from "./adapter.js";
import { compileLinePatterns } from "./patterns.js";
import { packOf, type ManifestRecord } from "./types.js";

// One provider as a run uses it: the manifest's line patterns and ready pattern together with its adapter's hooks.
// Hooks run on the output path, so each is guarded: one that throws, returns the wrong shape or takes longer than
// the budget in a single call is reported once and turned off for the session, and the general behaviour carries on.

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
  // whether the adapter reads the agent's own quota at all
  readonly hasQuota: boolean;
}

// A hook that was turned off, as flat facts.
export interface HookProblem {
  provider: string;
  // the pack the provider came from ("<name>@<version>"), when it came from one
  pack?: string;
  hook: HookName;
  // it threw, it returned something of the wrong shape, or one call took longer than the budget
  failure: "threw" | "returned" | "slow";
  // what it threw, or what it returned and what was expected, as one line
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
}

// Opens a provider for one session: imports its adapter, if its manifest names one, and compiles its patterns.
export async function openProvider(record: ManifestRecord, options: ProviderOptions): Promise<ProviderHooks> {
  const manifest = record.manifest;
  if (!manifest) throw record.error ?? new Error(`${record.file} holds no valid manifest`);
  const adapter = manifest.adapter ? await loadAdapter(record) : undefined;
  const budgetMs = options.budgetMs ?? HOOK_BUDGET_MS;
  const clock = options.clock ?? (() => performance.now());
  const chromeLine = compileLinePatterns(manifest.chrome ?? []);
  const busyLine = compileLinePatterns(manifest.busy ?? []);
  const readyPattern = manifest.prompt?.ready ? new RegExp(manifest.prompt.ready, "m") : undefined;
  const off = new Set<HookName>();
  const pack = packOf(record.source);

  // One guarded call: the hook's checked result, or undefined when it has none, is off, or has just been turned off.
  const call = <T>(hook: HookName, argument: unknown, check: (value: unknown) => Checked<T>, budget = budgetMs): { value: T } | undefined => {
    const fn = adapter?.[hook] as ((this: ProviderAdapter, argument: unknown) => unknown) | undefined;
    if (!fn || off.has(hook)) return undefined;
    const started = clock();
    let outcome: Checked<T> | { threw: string };
    try {
      outcome = check(fn.call(adapter!, argument));
    } catch (error) {
      outcome = { threw: oneLine(error instanceof Error ? error.message : String(error)) };
    }
    const durationMs = clock() - started;
    if ("value" in outcome && durationMs <= budget) return outcome;
    off.add(hook);
    const failure = "threw" in outcome ? "threw" : "wrong" in outcome ? "returned" : "slow";
    const message = "threw" in outcome ? outcome.threw : "wrong" in outcome ? outcome.wrong : `took ${Math.round(durationMs)} ms`;
    options.report({ provider: manifest.id, ...(pack ? { pack } : {}), hook, failure, message, durationMs: Math.round(durationMs), budgetMs: budget });
    // a slow call's answer is still a good answer
    return "value" in outcome ? outcome : undefined;
  };

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
    hasTranscript: typeof adapter?.transcript === "function",
    launchSettings: (query) => call("launchSettings", query, checkSettings, Math.max(budgetMs, QUOTA_BUDGET_MS))?.value,
    quotaFiles: (query) => call("quotaFiles", query, checkFiles, Math.max(budgetMs, QUOTA_BUDGET_MS))?.value ?? [],
    quota: (query) => call("quota", query, checkQuota, Math.max(budgetMs, QUOTA_BUDGET_MS))?.value,
    hasQuota: typeof adapter?.quota === "function",
  };
}

// The one line users see when a hook is turned off.
export function formatHookProblem(problem: HookProblem): string {
  const what =
    problem.failure === "threw"
      ? `threw (${problem.message})`
      : problem.failure === "returned"
        ? `returned ${problem.message}`
        : `took ${problem.durationMs} ms (the budget is ${problem.budgetMs} ms)`;
  const pack = problem.pack ? ` (pack ${escapeControls(problem.pack)})` : "";
  return `uuldana: provider "${escapeControls(problem.provider)}"${pack}: its ${problem.hook} hook ${what}; uuldana carries on without it`;
}

// --- internal ---

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
