import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { UuldanaError } from "../base/errors.js";
import { providerLabel, type ManifestRecord } from "./types.js";

// What a provider's classify hook says of text the agent drew: a stop the general reader did not see, with what it
// knows of the limit. It may add a stop; the general rules against quotes, code and questions still hold.
export interface ProviderVerdict {
  stop: boolean;
  kind?: string;
  reset_at?: string;
  reason?: string;
}

// One turn of the conversation as an adapter reads it from its agent's screen or transcript: the user's words, the
// agent's answer, or one tool call the agent made, summarised on one line (the tool and its target).
export interface Turn {
  role: "user" | "agent" | "tool";
  text: string;
}

// What the transcript hook is told of the run that ended, to find that run's own session file and no other.
export interface TranscriptQuery {
  // the folder the agent ran in
  cwd: string;
  // the environment the agent ran with: its account folder (the manifest's account_env) and HOME are read from here
  env: Readonly<Record<string, string>>;
  // when the agent was started, and when it ended
  started: Date;
  ended: Date;
  // the session id uuldana gave the CLI (the manifest's session_id), when it gave one
  sessionId: string | undefined;
  // the first prompt uuldana gave the CLI, when it gave one: the first user turn of the file, if it is that run's
  prompt: string | undefined;
}

// What the quota hooks are told of a run, to find the agent's own quota numbers for it.
export interface QuotaQuery {
  cwd: string;
  // the environment the agent runs with: its account folder and HOME are read from here
  env: Readonly<Record<string, string>>;
  started: Date;
  // the session id uuldana gave the CLI (the manifest's session_id), when it gave one
  sessionId: string | undefined;
  // the file uuldana's status-line relay writes the CLI's latest status JSON to, when the manifest's quota.source is
  // "statusline" (the CLI runs the relay after each answer)
  feed: string | undefined;
}

// The agent's own account of its allowance: each window's use, and whether it says the allowance is gone.
export interface NativeQuota {
  windows: { name: string; usedPercent: number; resetsAt?: string; windowMinutes?: number }[];
  // the allowance is gone by the agent's own account: the kind of limit, its exact reset, and its words if it has any
  exhausted?: { kind?: string; reset_at?: string; text?: string };
}

// A run's conversation as the agent itself recorded it: the file it came from and the run's turns in order, the
// limit message, hidden reasoning and the CLI's own notices left out.
export interface Transcript {
  file: string;
  turns: Turn[];
}

// A provider adapter: a plain object of optional, synchronous hooks, called on the output path.
export interface ProviderAdapter {
  // a line or lines the agent drew, as one string: a stop for wording the general reader does not know
  classify?(text: string): ProviderVerdict | undefined;
  // true when the line is the agent's own interface (banner, footer, hint, input box, status line)
  chrome?(line: string): boolean;
  // true while the screen shows that the agent is working
  busy?(screen: readonly string[]): boolean;
  // the agent's turns, where the general reading of its screen is wrong for it
  conversation?(screenText: string): Turn[] | undefined;
  // true when a typed prompt may be pasted
  ready?(screen: readonly string[]): boolean;
  // the run's conversation from the agent's own session file; undefined when it cannot be found or read
  transcript?(query: TranscriptQuery): Transcript | undefined;
  // the settings the run starts with (JSON, written by uuldana to a file of the session and passed with the
  // manifest's quota.settings_flag): how a CLI is told to run uuldana's status-line relay, never by editing the
  // user's own settings files
  launchSettings?(query: QuotaQuery): Record<string, unknown> | undefined;
  // the files (or folders) whose changes bring a new quota reading, watched while the agent runs
  quotaFiles?(query: QuotaQuery): string[];
  // the agent's latest quota numbers, read when a watched file changed; undefined when there are none yet
  quota?(query: QuotaQuery): NativeQuota | undefined;
}

// Whether a value is a list of turns, as a hook returns them or a session saved them.
export function isTurnList(value: unknown): value is Turn[] {
  const isTurn = (turn: unknown): boolean => {
    if (typeof turn !== "object" || turn === null || Array.isArray(turn)) return false;
    const { role, text } = turn as Record<string, unknown>;
    return (role === "user" || role === "agent" || role === "tool") && typeof text === "string";
  };
  return Array.isArray(value) && value.every(isTurn);
}

// Turns copied field by field: nothing else a hook or a file put on them is kept.
export function copyTurns(turns: readonly Turn[]): Turn[] {
  return turns.map((turn) => ({ role: turn.role, text: turn.text }));
}

// The hooks an adapter may export, by name.
export const HOOK_NAMES = ["classify", "chrome", "busy", "conversation", "ready", "transcript", "launchSettings", "quotaFiles", "quota"] as const satisfies readonly (keyof ProviderAdapter)[];

// Identity helper that gives an adapter module its type.
export function defineProvider<T extends ProviderAdapter>(adapter: T): T {
  return adapter;
}

// The name of one hook.
export type HookName = (typeof HOOK_NAMES)[number];

// Imports a provider's adapter into this thread; called only when that provider runs, never to list or validate. An
// adapter that will not load is E_ADAPTER_LOAD; one whose default export is not an object of hooks is
// E_ADAPTER_INVALID. uuldana's own adapters are loaded so; a pack's or a drop-in's runs in a thread of its own
// (adapter-thread.ts), where the same checks judge what it exports.
export async function loadAdapter(record: ManifestRecord): Promise<ProviderAdapter | undefined> {
  const file = adapterFile(record);
  if (!file) return undefined;
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (error) {
    throw importError(record, error);
  }
  checkExports(record, describeExports(loaded));
  return loaded.default as ProviderAdapter;
}

// The adapter file a manifest names, resolved beside the manifest; undefined when it names none.
export function adapterFile(record: ManifestRecord): string | undefined {
  const relative = record.manifest?.adapter;
  return relative ? resolve(dirname(record.file), relative) : undefined;
}

// What a module exports, as plain facts that can leave the thread that imported it: whether it has a default export,
// what that is, and what each of its entries is.
export interface ExportsShape {
  hasDefault: boolean;
  kind: string;
  plain: boolean;
  entries: [name: string, kind: string][];
}

export function describeExports(loaded: { default?: unknown }): ExportsShape {
  const adapter = loaded.default;
  const plain = typeof adapter === "object" && adapter !== null && !Array.isArray(adapter) && [Object.prototype, null].includes(Object.getPrototypeOf(adapter));
  return {
    hasDefault: "default" in loaded,
    kind: kindOf(adapter),
    plain,
    entries: plain ? Object.entries(adapter as object).map(([name, hook]) => [name, typeof hook === "function" ? "function" : kindOf(hook)]) : [],
  };
}

// The hooks an adapter gives, or E_ADAPTER_INVALID saying what in its exports is not an object of hooks.
export function checkExports(record: ManifestRecord, shape: ExportsShape): HookName[] {
  const invalid = (problem: string): UuldanaError =>
    new UuldanaError("E_ADAPTER_INVALID", `the adapter of ${label(record)} ${problem}`, {
      details: details(record),
      hint: `an adapter's default export is an object of hooks, export default defineProvider({ ... }); each hook is optional and a function: ${HOOK_NAMES.slice(0, -1).join(", ")} and ${HOOK_NAMES.at(-1)}`,
      exitCode: 1,
    });
  if (!shape.hasDefault) throw invalid("has no default export");
  if (!shape.plain) throw invalid(`has ${shape.kind} as its default export, not a plain object`);
  for (const [name, kind] of shape.entries) {
    if (!(HOOK_NAMES as readonly string[]).includes(name)) throw invalid(`exports "${name}", which is not a hook`);
    if (kind !== "function") throw invalid(`exports "${name}" as ${kind}, not a function`);
  }
  return shape.entries.map(([name]) => name as HookName);
}

// E_ADAPTER_LOAD for an import that failed: a missing file, a syntax error with its line, or what its top level threw.
export function importError(record: ManifestRecord, error: unknown): UuldanaError {
  return adapterLoadError(record, loadFailure(error, adapterFile(record)!), (error as { cause?: unknown } | undefined)?.cause);
}

// E_ADAPTER_LOAD saying what the adapter did instead of loading.
export function adapterLoadError(record: ManifestRecord, what: string, cause?: unknown): UuldanaError {
  return new UuldanaError("E_ADAPTER_LOAD", `the adapter of ${label(record)} will not load: ${what}`, {
    details: details(record),
    hint: `fix the adapter, or remove "adapter" from the manifest to run ${record.manifest!.id} without one`,
    exitCode: 1,
    // the message already says what the import said; a deeper cause of it (what the module itself failed on) is shown below
    cause,
  });
}

// --- internal ---

function label(record: ManifestRecord): string {
  return providerLabel(record.manifest!.id, record.source);
}

function details(record: ManifestRecord): string[] {
  return [`  adapter: ${adapterFile(record)}`, `  manifest: ${record.file}`];
}

// Why an import failed, in words: a missing file, a syntax error with its line, or what its top level threw. The
// file and its syntax are looked at again rather than read from the error, which says less and depends on the loader.
function loadFailure(error: unknown, file: string): string {
  if (!existsSync(file)) return "the file does not exist";
  const syntax = syntaxError(file);
  if (syntax) return `a syntax error on line ${syntax.line} (${syntax.message})`;
  return `loading it threw an error (${error instanceof Error ? error.message.split("\n")[0]! : String(error)})`;
}

// Node's syntax check of the file's text as a module: the first line at fault and what is wrong there.
function syntaxError(file: string): { line: number; message: string } | undefined {
  let source: string;
  try {
    source = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const check = spawnSync(process.execPath, ["--input-type=module", "--check"], { input: source, encoding: "utf8", timeout: 10_000 });
  const line = /^\[stdin\]:(\d+)$/m.exec(check.stderr ?? "")?.[1];
  const message = /^SyntaxError: (.*)$/m.exec(check.stderr ?? "")?.[1];
  return line && message ? { line: Number(line), message } : undefined;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") {
    const prototype = Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null;
    return prototype === null || prototype === Object.prototype ? "an object" : `an instance of ${prototype.constructor?.name || "a class"}`;
  }
  if (typeof value === "undefined") return "undefined";
  return `a ${typeof value === "bigint" ? "number" : typeof value}`;
}
