import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { expandHome, type Env } from "../base/paths.js";
import { readConfigFile, replaceConfigText, writeConfigKeys, type ConfigFile } from "../config/config-file.js";
import { assertNpmSucceeded, dependenciesOf, runNpm, versionOf } from "./npm.js";
import { checkPack } from "./pack-check.js";
import { isPathSpec, packLabel } from "./packs.js";

// uuldana providers add and remove: a pack installed with the user's npm into the config dir's own node_modules and
// named in config.json's packs, or taken out of both. Nothing is changed until the pack has been installed once
// on the side and every manifest in it is valid; when a later step fails, what was changed is put back.

// What an added pack brought.
export interface AddedPack {
  name: string;
  version: string | null;
  // its providers: id, name and manifest file, in the pack's order
  providers: { id: string; name: string; file: string }[];
  // "added" to packs, or "updated" when packs named it already
  change: "added" | "updated";
  // the registry's notes about it: the providers it replaces
  notes: string[];
}

export interface PackOptions {
  configDir: string;
  configFile: string;
  cwd: string;
  env: Env;
  allowScripts?: boolean;
  // the built-in id the pack's manifest of that id replaces (providers add --replace ID)
  replace?: string;
}

// Installs a pack (an npm package name and version range, a folder or a tarball) and adds it to packs.
export async function addPack(spec: string, options: PackOptions): Promise<AddedPack> {
  const config = readConfig(options.configFile);
  const local = localPath(spec, options);
  if (local && !existsSync(local)) {
    throw new UuldanaError("E_USAGE", `no provider pack at ${local}: there is no such file or folder`, {
      hint: "give the path of a pack's folder or of its .tgz (npm pack makes one), or a package name such as uuldana-provider-<name>",
    });
  }
  const packs = packsOf(config);
  const replaces = replacesOf(config);
  // first on the side, to see what it is before anything of the user's changes
  const checked = await checkPack(spec, local, packs, { ...options, replaces });
  try {
    // then for real, into the config dir's own node_modules, the same package the side install checked
    const { name, version } = checked;
    const installed = installState(options.configDir);
    const real = local ?? `${name}@${version}`;
    assertNpmSucceeded(await runNpm("install", [real], { prefix: ensureFolder(options.configDir), env: options.env, allowScripts: options.allowScripts }), spec, () => restoreState(installed));
    const change = packs.includes(name) ? "updated" : "added";
    const replacing = options.replace !== undefined && replaces[options.replace] !== name;
    if (change === "added" || replacing) {
      const problem = writeConfigKeys(config, {
        ...(change === "added" ? { packs: [...packs, name] } : {}),
        ...(replacing ? { replaces: { ...replaces, [options.replace!]: name } } : {}),
      });
      if (problem) {
        await runNpm("uninstall", [name], { prefix: options.configDir, env: options.env });
        restoreState(installed);
        throw new UuldanaError("E_CONFIG_UNREADABLE", problem, { hint: "make config.json writable, then add the pack again", exitCode: 1 });
      }
    }
    // what the side install found, named where the pack now is
    const here = (text: string): string => text.replaceAll(checked.folder, join(options.configDir, "node_modules", name));
    return {
      name,
      version,
      providers: checked.providers.map((provider) => ({ ...provider, file: here(provider.file) })),
      change,
      notes: checked.notes.map(here),
    };
  } finally {
    checked.dispose();
  }
}

// Takes a pack out of packs and, when uuldana installed it in the config dir, uninstalls it; the config dir's npm
// files go too once no pack is left in them. Returns what was done, in words.
export async function removePack(spec: string, options: PackOptions): Promise<string> {
  const config = readConfig(options.configFile);
  const packs = packsOf(config);
  if (!packs.includes(spec)) {
    throw new UuldanaError("E_USAGE", `"${spec}" is not in "packs" of ${options.configFile}`, {
      hint: packs.length ? `its packs: ${packs.join(", ")}` : "it names no pack",
    });
  }
  const installedHere = !isPathSpec(spec) && spec in dependenciesOf(options.configDir);
  // the last pack taken out takes the key with it, and a config.json left with nothing in it goes too: the config is
  // as it was before the first pack was added
  const left = packs.filter((pack) => pack !== spec);
  // the built-in ids it replaced are the built-ins' again
  const replaces = Object.fromEntries(Object.entries(replacesOf(config)).filter(([, pack]) => pack !== spec));
  const emptied = left.length === 0 && Object.keys(replaces).length === 0 && Object.keys(config.config).every((key) => key === "packs" || key === "replaces");
  const changes = { packs: left.length ? left : undefined, ...("replaces" in config.config ? { replaces: Object.keys(replaces).length ? replaces : undefined } : {}) };
  const problem = emptied ? replaceConfigText(config, undefined) : writeConfigKeys(config, changes);
  if (problem) throw new UuldanaError("E_CONFIG_UNREADABLE", problem, { hint: "make config.json writable, then remove the pack again", exitCode: 1 });
  if (!installedHere) {
    return `removed ${spec} from packs in ${options.configFile}; ${isPathSpec(spec) ? "its folder is left as it is" : `it was not installed in ${options.configDir}, so nothing was uninstalled`}`;
  }
  const version = versionOf(join(options.configDir, "node_modules", spec));
  const installed = installState(options.configDir);
  const run = await runNpm("uninstall", [spec], { prefix: options.configDir, env: options.env });
  try {
    assertNpmSucceeded(run, spec, () => restoreState(installed));
  } catch (error) {
    replaceConfigText(config, config.text);
    throw error;
  }
  removeEmptyProject(options.configDir);
  return `removed ${packLabel({ name: spec, version })} from packs in ${options.configFile} and uninstalled it from ${options.configDir}`;
}

// --- internal ---

function readConfig(file: string): ConfigFile {
  const found = readConfigFile(file);
  if ("problem" in found) throw new UuldanaError("E_CONFIG_UNREADABLE", found.problem, { hint: "fix config.json (uuldana providers list shows what is wrong with it), then try again" });
  return found;
}

function replacesOf(config: ConfigFile): Record<string, string> {
  const replaces = config.config.replaces;
  if (typeof replaces !== "object" || replaces === null || Array.isArray(replaces)) return {};
  return Object.fromEntries(Object.entries(replaces).filter((pair): pair is [string, string] => typeof pair[1] === "string"));
}

function packsOf(config: ConfigFile): string[] {
  const packs = config.config.packs;
  return Array.isArray(packs) ? packs.filter((pack): pack is string => typeof pack === "string") : [];
}

// A folder or a tarball given by its path, made absolute: npm would read a relative one from the prefix it works in.
// A path is what npm takes for one: it begins with ., / or ~/, ends in .tgz, .tar.gz or .tar, or has a slash that
// no scoped package name (@scope/name) nor URL (https:, git+ssh:, github:…) has.
function localPath(spec: string, options: PackOptions): string | undefined {
  if (/^[a-z][a-z0-9+.-]+:/i.test(spec)) return undefined;
  const path = /^(?:\.|~\/)/.test(spec) || isAbsolute(spec) || /\.(?:tgz|tar\.gz|tar)$/.test(spec) || (spec.includes("/") && !spec.startsWith("@"));
  return path ? resolve(options.cwd, expandHome(spec, options.env)) : undefined;
}

function ensureFolder(folder: string): string {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  return folder;
}

const NPM_FILES = ["package.json", "package-lock.json"];

// The config dir's npm files as they were, to put back when npm or a later step failed.
interface NpmFiles {
  prefix: string;
  texts: Map<string, string | undefined>;
}

function installState(prefix: string): NpmFiles {
  const read = (name: string): string | undefined => (existsSync(join(prefix, name)) ? readFileSync(join(prefix, name), "utf8") : undefined);
  return { prefix, texts: new Map(NPM_FILES.map((name) => [name, read(name)])) };
}

function restoreState(state: NpmFiles): void {
  for (const [name, text] of state.texts) {
    const file = join(state.prefix, name);
    if (text === undefined) rmSync(file, { force: true });
    else writeFileSync(file, text, { mode: 0o600 });
  }
  if (state.texts.get("package.json") === undefined) removeEmptyModules(state.prefix);
}

// Once the last pack is gone: the package.json npm made (no dependencies, nothing else), its lock and an empty
// node_modules are removed, so the config dir is as it was before the first pack.
function removeEmptyProject(prefix: string): void {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(readFileSync(join(prefix, "package.json"), "utf8")) as Record<string, unknown>;
  } catch {
    return;
  }
  const keys = Object.keys(json);
  const empty = keys.every((key) => key === "dependencies") && Object.keys((json.dependencies as object | undefined) ?? {}).length === 0;
  if (!empty || !removeEmptyModules(prefix)) return;
  for (const name of NPM_FILES) rmSync(join(prefix, name), { force: true });
}

// node_modules removed when npm left nothing in it but its own record; true when it is gone.
function removeEmptyModules(prefix: string): boolean {
  const modules = join(prefix, "node_modules");
  if (!existsSync(modules)) return true;
  if (!statSync(modules).isDirectory() || readdirSync(modules).some((name) => name !== ".package-lock.json" && name !== ".bin")) return false;
  if (existsSync(join(modules, ".bin")) && readdirSync(join(modules, ".bin")).length > 0) return false;
  rmSync(modules, { recursive: true, force: true });
  return true;
}
