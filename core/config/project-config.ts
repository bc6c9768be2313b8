import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, dirname, extname, join, parse } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { checkRegularFile, FileProblem } from "../base/files.js";
import { parseJson } from "../base/json.js";
import { packageRoot } from "../base/paths.js";
import { yamlError } from "./yaml-errors.js";

// A project's config, found by cosmiconfig (module name "uuldana") from the current folder up to the repository's
// root: the first folder holding one of the places wins, and in a folder the places are tried in this order. JSON
// and YAML only: a cloned repository never runs code here, nor makes uuldana read files other than these.
export const PROJECT_PLACES = [
  "package.json",
  ".uuldanarc",
  ".uuldanarc.json",
  ".uuldanarc.yaml",
  ".uuldanarc.yml",
  ".config/uuldanarc",
  ".config/uuldanarc.json",
  ".config/uuldanarc.yaml",
  ".config/uuldanarc.yml",
  "uuldana.config.json",
];

// The forms of a config that run code: never loaded, and reported when a folder has one.
const CODE_PLACES = [".uuldanarc", ".config/uuldanarc", "uuldana.config"].flatMap((base) =>
  [".js", ".cjs", ".mjs", ".ts", ".cts", ".mts"].map((extension) => `${base}${extension}`),
);

export interface ProjectSearch {
  found?: { config: unknown; filepath: string };
  // the configs that run code met on the way, never loaded
  ignored: string[];
}

// The project config in force for a folder, if any, and the configs passed by because they would run code.
export async function findProjectConfig(cwd: string): Promise<ProjectSearch> {
  const stop = repositoryRoot(cwd);
  const ignored: string[] = [];
  for (let dir = cwd; ; dir = dirname(dir)) {
    const present = await placesIn(dir);
    ignored.push(...CODE_PLACES.map((place) => join(dir, place)).filter((file) => existsSync(file)));
    // cosmiconfig is loaded only when a folder holds one of the places (a package.json only when it names uuldana)
    if (present.length > 0) {
      const found = await (await explorer()).search(dir);
      if (found && !found.isEmpty) return { found: { config: found.config, filepath: found.filepath }, ignored };
    }
    if (dir === stop || dir === dirname(dir)) return { ignored };
  }
}

// --- internal ---

type Explorer = { search(from: string): Promise<{ config: unknown; filepath: string; isEmpty?: boolean } | null> };

let cached: Promise<Explorer> | undefined;

function explorer(): Promise<Explorer> {
  cached ??= import("cosmiconfig").then(({ cosmiconfig, defaultLoaders }) => {
    const loaders = {
      ".json": loadJson,
      ".yaml": yamlLoader(defaultLoaders[".yaml"]!),
      ".yml": yamlLoader(defaultLoaders[".yml"]!),
      noExt: yamlLoader(defaultLoaders.noExt!),
      ...Object.fromEntries([".js", ".cjs", ".mjs", ".ts", ".cts", ".mts"].map((extension) => [extension, refuseCode])),
    };
    // cosmiconfig reads a configuration of its own (.config/config.* or package.json's "cosmiconfig") in the
    // current folder when it is created, and would run a .config/config.js there: it is created from uuldana's
    // own folder, which holds none, so nothing of the project is read before the search
    const here = process.cwd();
    process.chdir(packageRoot());
    try {
      return cosmiconfig("uuldana", { searchStrategy: "none", searchPlaces: PROJECT_PLACES, loaders, cache: false });
    } finally {
      process.chdir(here);
    }
  });
  return cached;
}

// The places present in a folder; a folder, named pipe or broken link where one would be is an error before any is
// read: a pipe would wait forever, and a broken place must not let a later one stand in for it without a word.
async function placesIn(dir: string): Promise<string[]> {
  const present: string[] = [];
  for (const place of PROJECT_PLACES) {
    const file = join(dir, place);
    const problem = await checkRegularFile(file);
    if (problem) throw unreadable(problem);
    if (!existsSync(file)) continue;
    // in a package.json only uuldana's own key is uuldana's business: one that never names it is passed by unread
    if (place === "package.json" && !(await readFile(file, "utf8")).includes('"uuldana"')) continue;
    present.push(place);
  }
  return present;
}

type Loader = (filepath: string, content: string) => unknown;

function loadJson(filepath: string, content: string): unknown {
  const inPackage = basename(filepath) === "package.json";
  const data = parseJson(content, filepath, "E_JSON_SYNTAX", inPackage ? "uuldana" : undefined);
  if (!inPackage) return refuseImport(data, filepath);
  // cosmiconfig takes the "uuldana" key itself; nothing else of the package.json reaches it
  const own = (data as { uuldana?: unknown } | null)?.uuldana;
  return own === undefined ? {} : { uuldana: refuseImport(own, filepath) };
}

function yamlLoader(load: Loader): Loader {
  return (filepath, content) => {
    let data: unknown;
    try {
      data = load(filepath, content);
    } catch (error) {
      throw yamlError(filepath, content, error);
    }
    assertSmall(data, filepath);
    return refuseImport(data, filepath);
  };
}

// YAML's aliases let a few lines stand for a tree too large to check (each alias of an alias doubles it): a project
// config is a handful of settings, so a document of more than MAX_NODES values, counted as they would be read, is
// refused before anything walks it.
const MAX_NODES = 10_000;

function assertSmall(data: unknown, filepath: string): void {
  let count = 0;
  const visit = (value: unknown): void => {
    if (++count > MAX_NODES) {
      throw new UuldanaError("E_CONFIG_INVALID", `invalid project config ${filepath}: more than ${MAX_NODES.toLocaleString("en-US")} values`, {
        hint: "a project config holds a few settings: check that this is the file you meant (YAML aliases count each time they are used)",
      });
    }
    if (typeof value === "object" && value !== null) for (const item of Object.values(value)) visit(item);
  };
  visit(data);
}

function refuseCode(filepath: string): never {
  throw new UuldanaError("E_CONFIG_INVALID", `${filepath}: a project config that runs code (${extname(filepath)}) is never loaded`, {
    hint: "put the settings in .uuldanarc.json or .uuldanarc.yaml",
  });
}

// cosmiconfig would read the files a config's "$import" names; a project config is read on its own.
function refuseImport(data: unknown, filepath: string): unknown {
  if (typeof data === "object" && data !== null && "$import" in data) {
    throw new UuldanaError("E_CONFIG_INVALID", `invalid project config ${filepath}: "$import" is not supported`, {
      hint: "a project config is read on its own; put the settings in this file",
    });
  }
  return data;
}

function unreadable(problem: FileProblem): UuldanaError {
  return new UuldanaError("E_CONFIG_UNREADABLE", `cannot read project config ${problem.file}: it ${problem.reason}`, {
    hint: `a project config must be a JSON or YAML file: ${problem.fix}`,
    cause: problem.cause,
  });
}

// The nearest folder holding .git, or the start folder itself outside a repository.
function repositoryRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return dir;
    if (dir === parse(dir).root) return start;
  }
}
