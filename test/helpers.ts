import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { stripEscapes } from "../core/base/ansi.js";

export const root = dirname(dirname(fileURLToPath(import.meta.url)));
export const bin = join(root, "dist", "core", "cli", "main.js");
export const fixtures = join(root, "test", "fixtures");

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

// A reset the limit stand-ins print (LIMIT_RESET), as a weekly-limit banner writes it.
export interface LimitReset {
  // the clock it was taken from
  from: Date;
  // "Dec 5, 9am (Europe/Berlin)"
  text: string;
  // the banner's words as uuldana reads and records them
  message: string;
  // the instant uuldana reads from it, its minute of margin included
  iso: string;
  // that instant as uuldana shows it: "2026-12-05 08:01 UTC"
  shown: string;
}

// Two days after a clock at 9am Berlin time, so a date without a year always lies ahead of the clock uuldana reads.
export function limitReset(from: Date): LimitReset {
  const day = wallIn("Europe/Berlin", new Date(from.getTime() + 2 * 86_400_000));
  const nineAsUtc = Date.UTC(day.year, day.month - 1, day.day, 9);
  // Berlin's offset that morning, summer time or not: it changes at 01:00 UTC, so 9am UTC has the one 9am Berlin has
  const wall = wallIn("Europe/Berlin", new Date(nineAsUtc));
  const offset = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute) - nineAsUtc;
  const iso = new Date(nineAsUtc - offset + 60_000).toISOString();
  const month = new Date(nineAsUtc).toLocaleString("en-US", { month: "short", timeZone: "UTC" });
  const text = `${month} ${day.day}, 9am (Europe/Berlin)`;
  return { from, text, message: `You've hit your weekly limit · resets ${text}`, iso, shown: `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` };
}

// What a clock in a zone reads at an instant.
function wallIn(timeZone: string, at: Date): { year: number; month: number; day: number; hour: number; minute: number } {
  const format = new Intl.DateTimeFormat("en-US", { timeZone, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric" });
  const part = (type: string): number => Number(format.formatToParts(at).find((p) => p.type === type)!.value);
  return { year: part("year"), month: part("month"), day: part("day"), hour: part("hour"), minute: part("minute") };
}

// The reset every sandbox hands the limit stand-ins, taken once from the tests' clock.
export const LIMIT_RESET = limitReset(new Date());

// A scratch home for one test: config, data and cache dirs, a project folder and a PATH folder.
export interface Sandbox {
  dir: string;
  config: string;
  data: string;
  cache: string;
  project: string;
  path: string;
  env: Record<string, string>;
  write(relative: string, content: string | object, mode?: number): string;
  run(args: string[], options?: { cwd?: string; env?: Record<string, string>; stdin?: string }): Promise<Run>;
  cleanup(): void;
}

export function makeSandbox(): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), "uuldana-test-"));
  const folders = { config: join(dir, "config"), data: join(dir, "data"), cache: join(dir, "cache"), project: join(dir, "project"), path: join(dir, "bin") };
  for (const folder of Object.values(folders)) mkdirSync(folder, { recursive: true });
  // the project is its own repository so the project-config search stops there
  mkdirSync(join(folders.project, ".git"));
  const env: Record<string, string> = {
    PATH: `${folders.path}:${dirname(process.execPath)}:/usr/bin:/bin`,
    HOME: dir,
    UULDANA_CONFIG_DIR: folders.config,
    UULDANA_DATA_DIR: folders.data,
    UULDANA_CACHE_DIR: folders.cache,
    LIMIT_RESET: LIMIT_RESET.text,
  };
  return {
    dir,
    ...folders,
    env,
    write(relative, content, mode) {
      const file = join(dir, relative);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content, null, 2) + "\n");
      if (mode !== undefined) chmodSync(file, mode);
      return file;
    },
    run(args, options = {}) {
      return runBin(args, { cwd: options.cwd ?? folders.project, env: { ...env, ...options.env }, stdin: options.stdin });
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// Runs the built bin under plain node, as a user's shell would.
export function runBin(args: string[], options: { cwd: string; env: Record<string, string>; stdin?: string }): Promise<Run> {
  return runFile(process.execPath, [bin, ...args], options);
}

// Runs any program to its end with its output collected; stdin gets the given text, then end of file.
export function runFile(file: string, args: string[], options: { cwd: string; env: Record<string, string>; stdin?: string }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    // a program that ends without reading its input closes the pipe: its exit and output say how it went
    child.stdin.on("error", (error: NodeJS.ErrnoException) => error.code === "EPIPE" || reject(error));
    child.stdin.end(options.stdin ?? "");
  });
}

// npm as the user has it set up (registry, certificates, Node headers, the shared cache), without the settings an
// enclosing npm run passes down that would aim it at this project or at the real global prefix.
export function npmEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^npm_(?!config_)/i.test(key) || /^npm_config_(global_|local_)?prefix$/i.test(key)) continue;
    env[key] = value;
  }
  return { ...env, npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false" };
}

// A minimal valid manifest for a stand-in provider.
export function standInManifest(id: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    name: `Stand-in ${id}`,
    executables: [id],
    version: { args: ["--version"], pattern: `^${id} (\\d+\\.\\d+\\.\\d+)` },
    prompt: { mode: "argv" },
    levels: { "read-only": { args: ["--read-only"] }, ask: { args: ["--ask"] } },
    ...overrides,
  };
}

// Signs the built-in CLIs whose manifests can tell in, as their own logins leave the sandbox's home: stand-ins
// started under those manifests would otherwise be skipped as not signed in.
export function signInBuiltIns(sandbox: Sandbox): void {
  for (const file of [".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json", ".qwen/oauth_creds.json"]) sandbox.write(file, "{}");
}

// True while a process exists and is not a zombie waiting to be reaped (Linux /proc).
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

// Waits for a condition, checking every 20 ms, and fails after the deadline.
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// Links a stand-in agent into the sandbox's PATH folder under the name its manifest looks for.
export function linkAgent(sandbox: Sandbox, name: string, script: string): string {
  const target = join(sandbox.path, name);
  symlinkSync(join(fixtures, "agents", script), target);
  return target;
}

// Every file under a folder, by its path below it, with its text.
export function readTree(folder: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else files.set(path.slice(folder.length + 1), readFileSync(path, "utf8"));
    }
  };
  walk(folder);
  return files;
}

// The preamble of a handoff prompt, as the next agent gets it: from the agent whose allowance ran out (after the
// earlier ones), ending with the user's last request quoted, or without one.
export function handoffPreamble(from: string, request?: string, earlier: readonly string[] = []): string {
  return [
    `You are continuing a conversation from ${from}, whose usage allowance ran out${earlier.length ? `; before it, ${earlier.join(", ")} took part` : ""}. ` +
      "Below is the conversation so far, each turn once and in order, labelled with who said it: from the agents' own transcripts where uuldana could read them, else as their screens showed it. " +
      "Hidden reasoning, the earlier agents' memory, approvals they had been given and tool calls still running did not carry over: check the state of the files before relying on them.",
    "",
    request === undefined ? "Continue where the conversation leaves off." : `Continue with the user's last request, quoted here whole:\n\n${request.split("\n").map((line) => `> ${line}`).join("\n")}`,
  ].join("\n");
}

// One event of a session journal.
export type JournalLine = { type: string; [key: string]: unknown };

// Every session's journal in a data dir, one array of events per session, in the order of their ids (oldest first).
export function sessionJournals(dataDir: string): JournalLine[][] {
  const folder = join(dataDir, "sessions");
  return readdirSync(folder)
    .sort()
    .map((session) => readFileSync(join(folder, session, "journal.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line) as JournalLine));
}

// Waits until a session's journal in a data dir holds an event the test looks for (a journal not yet written, or
// caught with a line half written, is looked at again).
export async function waitForJournal(dataDir: string, what: (event: JournalLine) => boolean, description: string, timeoutMs = 20_000): Promise<void> {
  const has = (): boolean => {
    try {
      return sessionJournals(dataDir).flat().some(what);
    } catch {
      return false;
    }
  };
  await waitFor(has, description, timeoutMs);
}

// The lines uuldana said in a terminal's raw output, without the agents' screens (the bell rung at a failover comes
// right before uuldana's line).
export function uuldanaLines(raw: string): string[] {
  return stripEscapes(raw)
    .split(/\r?\n/)
    .map((line) => line.replace(/^[\r\x07]+/, ""))
    .filter((line) => line.startsWith("uuldana: "));
}

// How far ahead a rest that a test writes before starting uuldana must end: after uuldana has started and read it
// (and an agent or two have answered), on a loaded machine too. A test that needs the rest to end waits for it.
export const REST_MS = 8000;

// Resolves once the wall clock has passed the instant.
export function sleepUntil(instant: Date | number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, new Date(instant).getTime() - Date.now())));
}

// The CPU time this process spent on the work, in ms: what the work costs, which other processes on a loaded machine
// do not stretch as they stretch the wall clock.
export function cpuMs(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}
