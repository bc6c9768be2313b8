import { mkdirSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { FileProblem, readRegularFileSync, removeLeftovers } from "../base/files.js";
import { jsonText, parseJson } from "../base/json.js";

// config.json as uuldana changes it (/agent, providers add and remove; config set, unset and edit write through
// replaceConfigText): read whole, one key changed, written atomically, every other setting, unknown keys and the
// order of keys kept as they were.

// The file as found: its settings ({} when it does not exist yet), its text (undefined then), and the file that is
// written (a config.json that links to the user's own file stays a link: the file it points at is changed).
export interface ConfigFile {
  file: string;
  target: string;
  config: Record<string, unknown>;
  text: string | undefined;
}

// Reads config.json for a change; a file that cannot be read or is not a JSON object is a message saying so.
export function readConfigFile(file: string): ConfigFile | { problem: string } {
  let config: unknown = {};
  let text: string | undefined;
  let target = file;
  try {
    text = readRegularFileSync(file);
    config = parseJson(text, file);
    target = realpathSync(file);
  } catch (error) {
    if (error instanceof FileProblem && !error.missing) return { problem: `cannot change ${file}: it ${error.reason}` };
    if (error instanceof UuldanaError) return { problem: `cannot change ${error.message}` };
    if (!(error instanceof FileProblem)) return { problem: `cannot change ${file}: ${(error as Error).message}` };
  }
  if (typeof config !== "object" || config === null || Array.isArray(config)) return { problem: `cannot change ${file}: it does not hold a JSON object` };
  return { file, target, config: config as Record<string, unknown>, text };
}

// Writes settings in place of the file's, atomically (mode 0600): one key set (undefined: removed); a key new to the
// file goes where `first` says (first: before the other keys). Returns a message when the file could not be written,
// and then it is unchanged.
export function writeConfigFile(found: ConfigFile, key: string, value: unknown, first = false): string | undefined {
  return writeConfigKeys(found, { [key]: value }, first);
}

// The same for several keys at once, in one write.
export function writeConfigKeys(found: ConfigFile, changes: Record<string, unknown>, first = false): string | undefined {
  let updated = { ...found.config };
  for (const [key, value] of Object.entries(changes)) {
    updated = key in updated || !first ? { ...updated, [key]: value } : { [key]: value, ...updated };
    if (value === undefined) delete updated[key];
  }
  return replaceConfigText(found, jsonText(updated, 2) + "\n");
}

// Puts text as the file's whole content, atomically (mode 0600): how a change is made or undone. Undefined text
// removes the file (it did not exist before). A file new to a config dir that does not exist yet makes the dir
// first (0700).
export function replaceConfigText(found: ConfigFile, text: string | undefined): string | undefined {
  if (text === undefined) {
    try {
      rmSync(found.target, { force: true });
    } catch (error) {
      return `cannot change ${found.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
    }
    return undefined;
  }
  // what a uuldana killed mid-write left beside config.json goes first
  removeLeftovers(dirname(found.target), basename(found.target));
  const temp = `${found.target}.${process.pid}.tmp`;
  try {
    if (found.text === undefined) mkdirSync(dirname(found.target), { recursive: true, mode: 0o700 });
    writeFileSync(temp, text, { mode: 0o600 });
    renameSync(temp, found.target);
  } catch (error) {
    rmSync(temp, { force: true });
    return `cannot change ${found.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
  }
  return undefined;
}
