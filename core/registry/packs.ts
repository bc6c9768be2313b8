import { readdir, realpath, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { isAbsolute, join, relative, resolve } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { FileProblem, readRegularFile } from "../base/files.js";
import { parseJson } from "../base/json.js";
import { expandHome, packageRoot, type Env } from "../base/paths.js";

// A provider pack, found: the folder it lives in and the manifest files it declares.
export interface Pack {
  spec: string;
  folder: string;
  files: string[];
  // its package.json's name and version; the spec and null when it gives none (a folder of manifests)
  name: string;
  version: string | null;
}

// How a pack is named where its providers are listed: "name@version", or the name alone without a version.
export function packLabel(pack: Pick<Pack, "name" | "version">): string {
  return pack.version ? `${pack.name}@${pack.version}` : pack.name;
}

// Finds a pack named in config.json and lists its manifest files; throws a UuldanaError naming the fix.
export async function resolvePack(spec: string, configDir: string, env: Env = process.env): Promise<Pack> {
  const folder = isPathSpec(spec) ? resolve(configDir, expandHome(spec, env)) : await findPackage(spec, configDir);
  if (!folder) {
    throw new UuldanaError("E_PACK_NOT_INSTALLED", `provider pack "${spec}" is not installed`, {
      hint: `install it with "uuldana providers add ${spec}", or remove it from "packs" with "uuldana providers remove ${spec}"`,
      exitCode: 1,
    });
  }
  const packageFile = join(folder, "package.json");
  let declared: unknown;
  let identity: { name?: unknown; version?: unknown } | null = null;
  try {
    const text = await readRegularFile(packageFile);
    identity = parseJson(text, packageFile, "E_JSON_SYNTAX", "uuldana") as { name?: unknown; version?: unknown; uuldana?: { manifests?: unknown } } | null;
    declared = (identity as { uuldana?: { manifests?: unknown } } | null)?.uuldana?.manifests;
  } catch (error) {
    if (error instanceof UuldanaError) throw error;
    if (!(error instanceof FileProblem)) throw error;
    const why = error.missing ? `has no readable package.json in ${folder}` : `cannot be read: ${packageFile} ${error.reason}`;
    throw new UuldanaError("E_PACK_UNREADABLE", `provider pack "${spec}" ${why}`, {
      hint: "a pack is an npm package whose package.json has \"uuldana\": {\"manifests\": [...]}",
      exitCode: 1,
      cause: error.cause,
    });
  }
  if (!Array.isArray(declared) || declared.length === 0 || !declared.every((m) => typeof m === "string")) {
    throw new UuldanaError("E_PACK_INVALID", `provider pack "${spec}" declares no manifests in ${packageFile}`, {
      hint: "add \"uuldana\": {\"manifests\": [\"manifests\"]} to its package.json (files or folders of .json manifests)",
      exitCode: 1,
    });
  }
  // a pack describes its own files only: what it declares, and the adapters its manifests name, stay in its folder
  const own = await realpath(folder);
  const outside = (declared as string[]).find((item) => !isInside(own, resolve(own, item)));
  if (outside !== undefined) {
    throw new UuldanaError("E_PACK_INVALID", `provider pack "${spec}" declares manifests outside its own folder ("${outside}") in ${packageFile}`, {
      hint: "a pack's manifests are files of the pack: name them relative to its package.json, without ..",
      exitCode: 1,
    });
  }
  const files: string[] = [];
  for (const item of declared as string[]) files.push(...(await listManifestFiles(resolve(own, item))));
  const name = typeof identity?.name === "string" && identity.name ? identity.name : spec;
  const version = typeof identity?.version === "string" && identity.version ? identity.version : null;
  return { spec, folder: own, files, name, version };
}

// Whether a path is the folder itself or lies inside it; both are taken as given, links already resolved.
export function isInside(folder: string, path: string): boolean {
  const from = relative(folder, path);
  return from === "" || (!from.startsWith("..") && !isAbsolute(from));
}

// Whether a name in packs is a folder (./…, ~/…, or absolute) rather than the name of an installed package.
export function isPathSpec(spec: string): boolean {
  return spec.startsWith(".") || spec.startsWith("~/") || isAbsolute(spec);
}

// The .json files of a folder in name order, or the path itself when it is a file; [] when it does not exist.
export async function listManifestFiles(path: string): Promise<string[]> {
  let info;
  try {
    info = await stat(path);
  } catch {
    return [];
  }
  if (!info.isDirectory()) return [path];
  let names: string[];
  try {
    names = await readdir(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new UuldanaError("E_MANIFEST_UNREADABLE", `cannot list the manifests in ${path} (${code})`, {
      hint: "check the folder's permissions: uuldana must be able to list it",
      cause: error,
    });
  }
  return names
    .filter((name) => name.endsWith(".json"))
    .sort()
    .map((name) => join(path, name));
}

// --- internal ---

async function findPackage(name: string, configDir: string): Promise<string | undefined> {
  const bases = [join(configDir, "index.js"), join(packageRoot(), "index.js")];
  for (const base of bases) {
    for (const modules of createRequire(base).resolve.paths(name) ?? []) {
      const folder = join(modules, name);
      try {
        await stat(join(folder, "package.json"));
        return folder;
      } catch {
        // not in this node_modules folder
      }
    }
  }
  return undefined;
}
