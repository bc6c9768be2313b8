import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

import { UuldanaError } from "../base/errors.js";
import type { Env } from "../base/paths.js";

// The user's own npm, run for provider packs: an argv array, never a shell line; always on a project folder given
// with --prefix, never on npm's global folder; install scripts off unless the user allowed them.

// How one npm command ended, with everything it printed.
export interface NpmRun {
  args: string[];
  exitCode: number | null;
  signal: string | null;
  // npm could not be started at all (not on PATH): the error's code
  missing: string | undefined;
  output: string;
}

export interface NpmOptions {
  prefix: string;
  env: Env;
  allowScripts?: boolean;
  // how long npm may take before it is stopped
  timeoutMs?: number;
}

// Runs `npm <command> --prefix <folder> …` with install scripts off (unless allowed), no audit, fund or update notice.
export function runNpm(command: string, specs: readonly string[], options: NpmOptions): Promise<NpmRun> {
  const args = [
    command,
    "--prefix",
    options.prefix,
    ...(options.allowScripts ? [] : ["--ignore-scripts"]),
    "--no-audit",
    "--no-fund",
    "--no-update-notifier",
    // a pack is installed with what it needs to run: a peer it names (uuldana itself, say) is neither installed nor
    // looked up (--omit=peer alone still asks the registry about it)
    "--omit=peer",
    "--legacy-peer-deps",
    "--omit=dev",
    // a folder is copied as its tarball would be, never linked: the pack installed is the one that was checked
    "--install-links",
    ...specs,
  ];
  return new Promise((resolve) => {
    const [file, ...before] = npmCommand();
    const child = spawn(file!, [...before, ...args], { env: npmEnv(options.env), stdio: ["ignore", "pipe", "pipe"], windowsHide: true });
    let output = "";
    const collect = (chunk: Buffer): void => {
      output += chunk.toString("utf8");
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    const timer = setTimeout(() => child.kill("SIGTERM"), options.timeoutMs ?? 300_000);
    child.on("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ args, exitCode: null, signal: null, missing: error.code ?? error.message, output });
    });
    child.on("close", (exitCode, signal) => {
      clearTimeout(timer);
      resolve({ args, exitCode, signal, missing: undefined, output });
    });
  });
}

// npm's failure as an error that shows what npm printed (npm missing, offline or refusing), after `undo` has put
// back what the failed step touched.
export function assertNpmSucceeded(run: NpmRun, spec: string, undo?: () => void): void {
  if (run.exitCode === 0) return;
  undo?.();
  const output = run.output.trimEnd().split("\n").filter((line) => line.trim()).slice(-40).map((line) => `  ${line}`);
  if (run.missing) {
    throw new UuldanaError("E_PACK_INSTALL", `cannot run npm to install "${spec}" (${run.missing}): nothing was changed`, {
      hint: "install Node.js with npm, or put npm on PATH, then try again",
      exitCode: 1,
    });
  }
  const how = run.signal ? `was stopped by ${run.signal}` : `exited with code ${run.exitCode}`;
  throw new UuldanaError("E_PACK_INSTALL", `npm ${run.args[0]} ${spec} ${how}: nothing was changed`, {
    details: [`  npm ${run.args.join(" ")}`, ...output],
    hint: "npm's own words are above: check the name or path, and your network or registry settings if it could not fetch the package",
    exitCode: 1,
  });
}

// The dependencies a folder's package.json names (what npm installed there); {} when it has none.
export function dependenciesOf(prefix: string): Record<string, string> {
  try {
    const json = JSON.parse(readFileSync(join(prefix, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
    return json.dependencies && typeof json.dependencies === "object" ? json.dependencies : {};
  } catch {
    return {};
  }
}

// The version in a package folder's package.json, or null.
export function versionOf(folder: string): string | null {
  try {
    const version = (JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as { version?: unknown }).version;
    return typeof version === "string" && version ? version : null;
  } catch {
    return null;
  }
}

// --- internal ---

// npm on PATH; on Windows, where npm is a .cmd file that only a shell can start, the npm-cli.js the Node installer
// puts beside node.exe, run by this node.
function npmCommand(): string[] {
  if (process.platform !== "win32") return ["npm"];
  const cli = join(dirname(process.execPath), "node_modules", "npm", "bin", "npm-cli.js");
  return existsSync(cli) ? [process.execPath, cli] : ["npm.cmd"];
}

// The user's environment without what an enclosing npm command passes down (its own project, global mode, another
// prefix): this npm works on the config dir and nowhere else.
function npmEnv(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (/^npm_(?!config_)/i.test(key) || /^npm_config_(global|location|prefix|global_prefix|local_prefix|save|save_dev|dry_run)$/i.test(key)) continue;
    out[key] = value;
  }
  return out;
}
