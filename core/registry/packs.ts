import { readdir, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { isAbsolute, join, resolve } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { FileProblem, readRegularFile } from "../base/files.js";
import { parseJson } from "../base/json.js";
import { expandHome, packageRoot, type Env } from "../base/paths.js";

// A provider pack, found: the folder it lives in and the manifest files it declares.
export interface Pack {
  spec: string;
  folder: string;
  files: string[];
}

// Finds a pack named in config.json and lists its manifest files; throws a UuldanaError naming the fix.
export async function resolvePack(spec: string, configDir: string, env: Env = process.env): Promise<Pack> {
  const folder = isPathSpec(spec) ? resolve(configDir, expandHome(spec, env)) : await findPackage(spec, configDir);
  if (!folder) {
    throw new UuldanaError("E_PACK_NOT_INSTALLED", `provider pack "${spec}" is not installed`, {
      hint: `install it with "npm install --prefix ${configDir} ${spec}", or next to uuldana with "npm install -g ${spec}"`,
      exitCode: 1,
    });
  }
  const packageFile = join(folder, "package.json");
  let declared: unknown;
  try {
    const text = await readRegularFile(packageFile);
    declared = (parseJson(text, packageFile, "E_JSON_SYNTAX", "uuldana") as { uuldana?: { manifests?: unknown } } | null)?.uuldana?.manifests;
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
  const files: string[] = [];
  for (const item of declared as string[]) files.push(...(await listManifestFiles(resolve(folder, item))));
  return { spec, folder, files };
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

function isPathSpec(spec: string): boolean {
  return spec.startsWith(".") || spec.startsWith("~/") || isAbsolute(spec);
}

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
