import { realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { FileProblem, readRegularFileSync, removeLeftovers } from "../base/files.js";
import { jsonText, parseJson } from "../base/json.js";

// config.json as uuldana changes it (/agent, providers add and remove): read whole, one key changed, written
// atomically, every other setting, unknown keys and the order of keys kept as they were.

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
  const updated = key in found.config || !first ? { ...found.config, [key]: value } : { [key]: value, ...found.config };
  if (value === undefined) delete updated[key];
  return replaceConfigText(found, jsonText(updated, 2) + "\n");
}

// Puts text back as the file's whole content, atomically: how a change is undone. Undefined text removes the file
// (it did not exist before).
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
    writeFileSync(temp, text, { mode: 0o600 });
    renameSync(temp, found.target);
  } catch (error) {
    rmSync(temp, { force: true });
    return `cannot change ${found.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
  }
  return undefined;
}
