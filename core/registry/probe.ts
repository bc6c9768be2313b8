import { spawn, type ChildProcessByStdio } from "node:child_process";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { basename } from "node:path";
import type { Readable } from "node:stream";

import { readRegularFile, removeLeftovers } from "../base/files.js";
import { jsonText } from "../base/json.js";
import type { Env } from "../base/paths.js";

// Asking an installed CLI something about itself (its version, its help) without letting it hold uuldana: stdin
// closed, no colours, bounded in time and output; and the answers kept in a cache file of the cache dir.

// What a CLI answered: its exit status and what it printed on stdout and stderr together.
export interface Probe {
  exitCode: number | null;
  output: string;
  timedOut: boolean;
}

export interface ProbeOptions {
  env: Env;
  timeoutSeconds: number;
  // how much of the output is kept (16 KB unless given)
  maxOutput?: number;
  // the folder the CLI runs in (uuldana's own, unless given)
  cwd?: string;
}

const MAX_OUTPUT = 16 * 1024;

// Runs "<cli> <args>" with stdin closed; a CLI that does not answer in time is killed with its process group.
// A grandchild that keeps the output pipe open cannot hold uuldana: output read by shortly after exit is enough.
export async function runProbe(path: string, args: readonly string[], options: ProbeOptions): Promise<Probe> {
  // CLIs started all at once on a small machine each take longer than their timeout: a few run at a time, and each
  // one's time counts from its own start
  while (running >= MAX_RUNNING) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await probe(path, args, options);
  } finally {
    running--;
    waiting.shift()?.();
  }
}

// How many probes run at once, and those waiting for their turn.
const MAX_RUNNING = Math.max(2, availableParallelism());
let running = 0;
const waiting: (() => void)[] = [];

function probe(path: string, args: readonly string[], options: ProbeOptions): Promise<Probe> {
  const maxOutput = options.maxOutput ?? MAX_OUTPUT;
  return new Promise((resolve) => {
    let output = "";
    let exitCode: number | null = null;
    let settled = false;
    let child: ChildProcessByStdio<null, Readable, Readable>;
    try {
      child = spawn(path, args, {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...options.env, NO_COLOR: "1" },
        ...(options.cwd ? { cwd: options.cwd } : {}),
        detached: process.platform !== "win32",
        windowsHide: true,
      });
    } catch (error) {
      resolve({ exitCode: null, output: `cannot start: ${(error as Error).message}`, timedOut: false });
      return;
    }
    const finish = (timedOut: boolean, failure?: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(afterExit);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({ exitCode, output: failure ?? output.slice(0, maxOutput), timedOut });
    };
    const collect = (chunk: Buffer): void => {
      if (output.length < maxOutput) output += chunk.toString("utf8");
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    let afterExit: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      killTree(child.pid);
      finish(true);
    }, options.timeoutSeconds * 1000);
    child.on("error", (error) => finish(false, `cannot start: ${error.message}`));
    child.on("exit", (code) => {
      exitCode = code;
      afterExit = setTimeout(() => finish(false), 200);
    });
    child.on("close", () => finish(false));
  });
}

// What a CLI printed, for a message: its first line, cut to 60 characters, quoted; or that it printed nothing.
export function describeOutput(output: string): string {
  const firstLine = output.trim().split("\n")[0]?.trim() ?? "";
  return firstLine ? `printed "${firstLine.length > 60 ? `${firstLine.slice(0, 57)}...` : firstLine}"` : "printed nothing";
}

// The answers a cache file keeps, by key; a missing or damaged file is an empty cache.
export async function readProbeCache<T>(file: string): Promise<Record<string, T>> {
  try {
    // a cache that is not a file (a named pipe would wait forever) or not valid is only a cache: probe again
    const data = JSON.parse(await readRegularFile(file)) as { version?: number; probes?: Record<string, T> };
    return data.version === 1 && data.probes ? data.probes : {};
  } catch {
    return {};
  }
}

// Replaces a cache file whole (0600 in a 0700 folder); a cache that cannot be written only costs time.
export async function writeProbeCache<T>(dir: string, file: string, probes: Record<string, T>): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    removeLeftovers(dir, basename(file));
    const temp = `${file}.${process.pid}.tmp`;
    try {
      await writeFile(temp, jsonText({ version: 1, probes }), { mode: 0o600 });
      await rename(temp, file);
    } finally {
      await rm(temp, { force: true });
    }
  } catch {
    // the cache only saves time; everything works without it
  }
}

// --- internal ---

function killTree(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(process.platform === "win32" ? pid : -pid, "SIGKILL");
  } catch {
    // already gone
  }
}
