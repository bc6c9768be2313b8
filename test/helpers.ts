import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const root = dirname(dirname(fileURLToPath(import.meta.url)));
export const bin = join(root, "dist", "core", "cli.js");
export const fixtures = join(root, "test", "fixtures");

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

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
    child.stdin.end(options.stdin ?? "");
  });
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
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
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
