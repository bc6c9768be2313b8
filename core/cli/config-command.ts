import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { parseJson } from "../base/json.js";
import type { Env } from "../base/paths.js";
import { checkUserConfig } from "../config/config-check.js";
import { CONFIG_DEFAULTS } from "../config/config-defaults.js";
import { changedText, checkKey, readConfigText, readSettings, writeConfigText, type ConfigText } from "../config/config-edit.js";
import { parseSharedUrl } from "../config/shared-url.js";
import { result, type CommandResult } from "./result.js";

// uuldana config get, set, unset and edit: the user's config.json (or the --config file), read and changed one
// setting at a time or in an editor. Nothing is written that loading the config would refuse, and a file it would
// refuse already is only ever changed in the editor.

// A setting's value as JSON (indented when it is an object or a list); one the file does not set is uuldana's
// default, said on stderr.
export function getSetting(file: string, key: string | undefined): CommandResult {
  if (key !== undefined) checkKey(key);
  const found = readConfigText(file);
  const settings = readSettings(found, false);
  const visible = shown(settings);
  const blanked = visible.shared_rests !== settings.shared_rests ? "note: shared_rests is shown with its credentials as ***; the file holds them\n" : "";
  if (key === undefined) {
    const missing = found.text === undefined ? `note: ${file} does not exist; uuldana uses its defaults\n` : "";
    return result(`${JSON.stringify(visible, null, 2)}\n`, missing + blanked);
  }
  if (Object.hasOwn(settings, key)) return result(`${JSON.stringify(visible[key], null, 2)}\n`, key === "shared_rests" ? blanked : "");
  const fallback = CONFIG_DEFAULTS[key];
  if (fallback === undefined) return result("", `note: "${key}" is not set in ${file}, and has no default\n`);
  return result(`${JSON.stringify(fallback, null, 2)}\n`, `note: "${key}" is not set in ${file}; this is uuldana's default\n`);
}

// Gives one setting the value from the command line, in the file's own text, once the whole file would load.
export function setSetting(file: string, key: string, raw: string): CommandResult {
  checkKey(key);
  const value = readValue(raw);
  const found = readConfigText(file);
  const settings = readValid(found, `set "${key}"`);
  const text = changedText(found, settings, key, value);
  const said = JSON.stringify(shown({ [key]: value })[key]);
  if (text === undefined) return result(`"${key}" is ${said} in ${file} already; nothing changed\n`);
  writeConfigText(found, text);
  return result(`set "${key}" to ${said} in ${file}\n`);
}

// Takes one setting out of the file, once the whole file would load without it.
export function unsetSetting(file: string, key: string): CommandResult {
  checkKey(key);
  const found = readConfigText(file);
  const settings = readValid(found, `unset "${key}"`);
  if (!Object.hasOwn(settings, key)) return result(`"${key}" is not set in ${file}; nothing changed\n`);
  writeConfigText(found, changedText(found, settings, key, undefined)!);
  const fallback = CONFIG_DEFAULTS[key];
  return result(`removed "${key}" from ${file}${fallback === undefined ? "" : `; uuldana uses its default, ${JSON.stringify(fallback)}`}\n`);
}

// --- internal ---

// The settings as uuldana shows them: the shared store's credentials blanked (the file keeps them), as everywhere
// else uuldana names the store.
function shown(settings: Record<string, unknown>): Record<string, unknown> {
  const store = settings.shared_rests;
  if (typeof store !== "string") return settings;
  let address: string;
  try {
    address = parseSharedUrl(store, "shared_rests").shown;
  } catch {
    // not a store URL: whatever stands before an @ may still be a password
    address = store.replace(/\/\/[^/@]*@/, "//***@");
  }
  return { ...settings, shared_rests: address };
}

// The value given on the command line: JSON when it reads as JSON (3, true, ["codex"], "ask"), else the text itself
// (ask, ctrl-]).
function readValue(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

// The file's settings, when loading would take the file as it is: one it would refuse is left for the user to mend.
function readValid(found: ConfigText, change: string): Record<string, unknown> {
  try {
    return readSettings(found, true);
  } catch (error) {
    if (!(error instanceof UuldanaError)) throw error;
    const fix = `uuldana writes no change into a file it would refuse: mend it first ("uuldana config edit" opens it)`;
    throw new UuldanaError(error.code, `cannot ${change}: ${error.message}`, { details: error.details, hint: error.hint ? `${error.hint}; ${fix}` : fix, cause: error.cause });
  }
}

// The editor runs on a copy beside the file (0600); the copy replaces the file, atomically, only when loading would
// take it. A copy that would not do is kept, and named, so no edit is lost.
export function editConfig(file: string, env: Env): CommandResult {
  const found = readConfigText(file);
  // a file that does not exist yet starts as {}, as /agent and providers add start one
  const before = found.text ?? "{}\n";
  const copy = join(dirname(found.target), `${basename(found.target)}.edit-${randomBytes(3).toString("hex")}.json`);
  try {
    mkdirSync(dirname(copy), { recursive: true, mode: 0o700 });
    writeFileSync(copy, before, { mode: 0o600, flag: "wx" });
  } catch (error) {
    throw new UuldanaError("E_CONFIG_UNREADABLE", `cannot write a copy of ${file} to edit: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, {
      hint: "make the folder that holds it writable, then try again",
      exitCode: 1,
    });
  }
  const failed = runEditor(editorCommand(env), copy, file);
  const after = readCopy(copy);
  if (failed || after === undefined) {
    const kept = after !== undefined && after !== before;
    if (!kept) rmSync(copy, { force: true });
    const { message, hint } = failed ?? { message: `the editor left no ${copy}`, hint: `${file} is unchanged` };
    throw new UuldanaError("E_EDITOR", message, { hint: kept ? `${hint}; what you wrote is kept in ${copy}` : hint });
  }
  if (after === before) rmSync(copy, { force: true });
  // a file saved as it was is checked as it is: one that is still not valid is said so
  const checked = after === before ? file : copy;
  try {
    checkUserConfig(parseJson(after, checked), checked);
  } catch (error) {
    if (!(error instanceof UuldanaError)) throw error;
    const where = after === before ? `you saved no change, so ${file} is as it was` : `${file} is unchanged, and your edit is kept in ${copy}: mend it there and move it over ${file}, or remove it`;
    throw new UuldanaError(error.code, error.message, { details: error.details, hint: `${error.hint ? `${error.hint}; ` : ""}${where}` });
  }
  if (after === before) return result(`no change to ${file}\n`);
  writeConfigText(found, after);
  rmSync(copy, { force: true });
  return result(`wrote ${file}\n`);
}

// $VISUAL, else $EDITOR, else vi, as an argv split at white space: never run through a shell.
function editorCommand(env: Env): string[] {
  return (env.VISUAL?.trim() || env.EDITOR?.trim() || "vi").split(/\s+/);
}

// Runs the editor on the user's terminal; an interrupt is the editor's to take (uuldana waits for it). What went
// wrong when it could not start or did not end well.
function runEditor(editor: string[], copy: string, file: string): { message: string; hint: string } | undefined {
  const ignore = (): void => {};
  process.on("SIGINT", ignore);
  let ran: ReturnType<typeof spawnSync>;
  try {
    ran = spawnSync(editor[0]!, [...editor.slice(1), copy], { stdio: "inherit" });
  } finally {
    process.off("SIGINT", ignore);
  }
  const named = `the editor "${editor.join(" ")}"`;
  if (ran.error) {
    const code = (ran.error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? `no ${editor[0]} was found` : code === "EACCES" ? `${editor[0]} is not executable` : (code ?? ran.error.message);
    return { message: `cannot start ${named}: ${why}`, hint: `set VISUAL or EDITOR to your editor's command (it runs without a shell); ${file} is unchanged` };
  }
  if (ran.status === 0) return undefined;
  return { message: `${named} ${ran.signal ? `was stopped by ${ran.signal}` : `exited with code ${ran.status}`}`, hint: `${file} is unchanged` };
}

function readCopy(copy: string): string | undefined {
  try {
    return readFileSync(copy, "utf8");
  } catch {
    return undefined;
  }
}
