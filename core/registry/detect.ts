import { readdir, stat } from "node:fs/promises";
import { delimiter, join } from "node:path";

import { stripEscapes } from "../base/ansi.js";
import type { Env } from "../base/paths.js";
import { readPackageVersion } from "./npm-package.js";
import { describeOutput, readProbeCache, runProbe, writeProbeCache, type Probe } from "./probe.js";
import type { Manifest } from "./types.js";

// What uuldana found out about one provider's CLI on this machine.
export interface Detection {
  installed: boolean;
  path: string | null;
  version: string | null;
  recognised: boolean;
  timedOut: boolean;
  problem: string | undefined;
  // where the version was read: the package.json of the npm package the CLI ships in, or the CLI's own answer
  versionFrom: "package" | "probe" | null;
}

export interface DetectOptions {
  env?: Env;
  cacheDir: string;
  platform?: NodeJS.Platform;
}

interface CachedProbe {
  mtimeMs: number;
  size: number;
  exitCode: number | null;
  output: string;
}

const DEFAULT_TIMEOUT_SECONDS = 8;

// Finds each provider's executable on PATH and reads its version: from the package.json of the npm package the
// manifest names when the executable is one of that package's own, else by probes run all at once, each bounded in time.
export async function detectProviders(manifests: readonly Manifest[], options: DetectOptions): Promise<Map<string, Detection>> {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const lookup = new PathLookup(env, platform);
  const cacheFile = join(options.cacheDir, "probes.json");
  const cache = await readProbeCache<CachedProbe>(cacheFile);
  let cacheChanged = false;

  const detections = await Promise.all(
    manifests.map(async (manifest): Promise<[string, Detection]> => {
      const found = await lookup.find(manifest.executables);
      if (!found.path) {
        const problem = found.notExecutable
          ? `${found.notExecutable} is not executable`
          : `no ${manifest.executables.join(" or ")} on PATH`;
        return [manifest.id, { installed: false, path: null, version: null, recognised: false, timedOut: false, problem, versionFrom: null }];
      }
      // a CLI can take seconds to start just to print its version; its package says the same at once
      const packaged = manifest.npm_package ? await readPackageVersion(found.path, manifest.npm_package) : undefined;
      if (packaged) {
        return [manifest.id, { installed: true, path: found.path, version: packaged, recognised: true, timedOut: false, problem: undefined, versionFrom: "package" }];
      }
      const key = [found.path, ...manifest.version.args].join("\0");
      const cached = cache[key];
      let probe: Probe;
      if (cached && cached.mtimeMs === found.mtimeMs && cached.size === found.size) {
        probe = { exitCode: cached.exitCode, output: cached.output, timedOut: false };
      } else {
        probe = await runProbe(found.path, manifest.version.args, { env, timeoutSeconds: manifest.version.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS });
        if (!probe.timedOut) {
          cache[key] = { mtimeMs: found.mtimeMs, size: found.size, exitCode: probe.exitCode, output: probe.output };
          cacheChanged = true;
        }
      }
      return [manifest.id, readProbe(manifest, found.path, probe)];
    }),
  );
  if (cacheChanged) await writeProbeCache(options.cacheDir, cacheFile, cache);
  return new Map(detections);
}

// --- internal ---

function readProbe(manifest: Manifest, path: string, probe: Probe): Detection {
  const command = [manifest.executables[0], ...manifest.version.args].join(" ");
  if (probe.timedOut) {
    const seconds = manifest.version.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS;
    return { installed: true, path, version: null, recognised: false, timedOut: true, problem: `"${command}" gave no answer within ${seconds} s`, versionFrom: null };
  }
  const output = stripEscapes(probe.output);
  const match = new RegExp(manifest.version.pattern, "m").exec(output);
  if (match) {
    return { installed: true, path, version: match[1] ?? match[0], recognised: true, timedOut: false, problem: undefined, versionFrom: "probe" };
  }
  const shown = describeOutput(output);
  const status = probe.exitCode === 0 ? "" : ` and exited with ${probe.exitCode ?? "a signal"}`;
  return {
    installed: true,
    path,
    version: null,
    recognised: false,
    timedOut: false,
    problem: `not recognised as ${manifest.name}: "${command}" ${shown}${status}`,
    versionFrom: null,
  };
}

// Finds executables in the folders of PATH, each folder listed once.
export class PathLookup {
  private readonly dirs: string[];
  private readonly extensions: string[];
  private readonly listings = new Map<string, Promise<Set<string> | undefined>>();

  constructor(env: Env, private readonly platform: NodeJS.Platform) {
    this.dirs = (env.PATH ?? env.Path ?? "").split(delimiter).filter(Boolean);
    this.extensions = platform === "win32" ? (env.PATHEXT ?? ".COM;.EXE;.BAT;.CMD").split(";").map((e) => e.toLowerCase()) : [""];
  }

  async find(names: readonly string[]): Promise<{ path?: string; mtimeMs: number; size: number; notExecutable?: string }> {
    let notExecutable: string | undefined;
    for (const name of names) {
      for (const dir of this.dirs) {
        const listing = await this.list(dir);
        for (const ext of this.extensions) {
          const candidate = this.platform === "win32" ? `${name}${ext}`.toLowerCase() : name;
          if (!listing?.has(candidate)) continue;
          const path = join(dir, `${name}${ext}`);
          const info = await stat(path).catch(() => undefined);
          if (!info?.isFile()) continue;
          if (this.platform !== "win32" && (info.mode & 0o111) === 0) {
            notExecutable ??= path;
            continue;
          }
          return { path, mtimeMs: info.mtimeMs, size: info.size };
        }
      }
    }
    return { mtimeMs: 0, size: 0, ...(notExecutable ? { notExecutable } : {}) };
  }

  private list(dir: string): Promise<Set<string> | undefined> {
    let listing = this.listings.get(dir);
    if (!listing) {
      const lower = this.platform === "win32";
      listing = readdir(dir).then(
        (names) => new Set(lower ? names.map((n) => n.toLowerCase()) : names),
        () => undefined,
      );
      this.listings.set(dir, listing);
    }
    return listing;
  }
}
