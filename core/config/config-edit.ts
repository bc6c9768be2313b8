import { realpathSync } from "node:fs";

import { UuldanaError } from "../base/errors.js";
import { FileProblem, readRegularFileSync } from "../base/files.js";
import { escapeJsonControls, parseJson } from "../base/json.js";
import { schemaKeys } from "../base/schema.js";
import { closestWord } from "../base/suggest.js";
import { checkUserConfig } from "./config-check.js";
import { replaceConfigText } from "./config-file.js";

// config.json as `uuldana config` reads and changes it: one setting at a time, in the file's own text, so its
// indentation, the order of its keys and the way every other value is written stay as they were; nothing is written
// that loading the config would refuse.

// The file as found: its text (undefined when it does not exist yet) and the file that is written (a config.json
// that links to the user's own file stays a link: the file it points at is changed).
export interface ConfigText {
  file: string;
  target: string;
  text: string | undefined;
}

// A setting's key checked against the schema's: an unknown one is a usage error with the nearest known key.
export function checkKey(key: string): void {
  const keys = schemaKeys("config");
  if (keys.includes(key)) return;
  const near = closestWord(key, keys);
  throw new UuldanaError("E_USAGE", `"${key}" is not a setting uuldana knows`, {
    hint: near ? `did you mean "${near}"?` : `the settings are ${keys.join(", ")}`,
  });
}

// Reads the config file; a missing one is no error (uuldana uses its defaults then), anything there that is not a
// readable file is.
export function readConfigText(file: string): ConfigText {
  try {
    const text = readRegularFileSync(file);
    return { file, target: realpathSync(file), text };
  } catch (error) {
    if (!(error instanceof FileProblem)) throw error;
    if (error.missing) return { file, target: file, text: undefined };
    throw new UuldanaError("E_CONFIG_UNREADABLE", `cannot read config ${file}: it ${error.reason}`, { hint: error.fix, cause: error.cause });
  }
}

// The settings the file holds ({} when it does not exist), as loading it would see them: a file with a JSON
// mistake is the error that names it; with valid, the file must also pass every check of loading.
export function readSettings(found: ConfigText, valid: boolean): Record<string, unknown> {
  if (found.text === undefined) return {};
  const data = parseJson(found.text, found.file);
  if (valid || typeof data !== "object" || data === null || Array.isArray(data)) checkUserConfig(data, found.file);
  return data as Record<string, unknown>;
}

// The file's text with one setting given a value (undefined: taken out), checked as loading would check it before
// anything is written; the error names the file and the setting. Undefined when nothing would change.
export function changedText(found: ConfigText, settings: Record<string, unknown>, key: string, value: unknown): string | undefined {
  if (JSON.stringify(settings[key]) === JSON.stringify(value)) return undefined;
  const text = found.text ?? "{}\n";
  const bom = text.charCodeAt(0) === 0xfeff ? "\ufeff" : "";
  const body = text.slice(bom.length);
  const changed = bom + (value === undefined ? removeMember(body, key) : setMember(body, key, value));
  try {
    checkUserConfig(parseJson(changed, found.file), found.file);
  } catch (error) {
    throw error instanceof UuldanaError ? refusal(found.file, key, value, error) : error;
  }
  return changed;
}

// Writes the file's new text atomically (0600), making the config dir (0700) when it is not there yet.
export function writeConfigText(found: ConfigText, text: string): void {
  const problem = replaceConfigText({ ...found, config: {} }, text);
  if (problem) throw new UuldanaError("E_CONFIG_UNREADABLE", problem, { hint: "make the file and its folder writable, then try again", exitCode: 1 });
}

// --- internal ---

// What loading would say of the changed file, said of the change: "cannot set "ceiling" to "nope" in FILE (1
// problem)", with the problems and the fix.
function refusal(file: string, key: string, value: unknown, error: UuldanaError): UuldanaError {
  const change = value === undefined ? `remove "${key}" from` : `set "${key}" to ${JSON.stringify(value)} in`;
  const count = /\((\d+ problems?)\)$/.exec(error.message)?.[1];
  const duplicate = /have the key (".*")$/.exec(error.message)?.[1];
  const why = count ? ` (${count})` : duplicate ? `: two entries would have the key ${duplicate}` : `: ${error.message}`;
  const hint = error.hint ?? (value === undefined ? undefined : `give "${key}" a value as the lines above say`);
  return new UuldanaError(error.code, `cannot ${change} ${file}${why}`, { details: error.details, hint: `${hint ? `${hint}; ` : ""}the file is unchanged` });
}

// One key of the top-level object and where its text is: the key's first quote, the end of its key, and its value.
interface Member {
  key: string;
  start: number;
  keyEnd: number;
  valueStart: number;
  valueEnd: number;
}

// The text with a key's value replaced where it stands, or the key added after the last one, written the way the
// file writes its keys: on a line of its own at the file's indentation, or on the one line of a one-line file.
function setMember(text: string, key: string, value: unknown): string {
  const { open, close, members } = topLevel(text);
  const existing = members.find((member) => member.key === key);
  const last = members.at(-1);
  const unit = last ? indentOf(text, last) : "  ";
  // what a value brings of DEL or C1 controls is written escaped, as in every file uuldana writes
  const written = escapeJsonControls(unit === undefined ? JSON.stringify(value) : JSON.stringify(value, null, unit).replaceAll("\n", `\n${unit}`));
  if (existing) return text.slice(0, existing.valueStart) + written + text.slice(existing.valueEnd);
  if (!last) return `${text.slice(0, open)}{\n  ${JSON.stringify(key)}: ${written}\n}${text.slice(close + 1)}`;
  const separator = text.slice(last.keyEnd, last.valueStart);
  const member = `${escapeJsonControls(JSON.stringify(key))}${separator}${written}`;
  return text.slice(0, last.valueEnd) + (unit === undefined ? `, ${member}` : `,\n${unit}${member}`) + text.slice(last.valueEnd);
}

// The text without a key: from its first quote to the next key's, or from the end of the key before it when it is
// the last; the only key leaves {}.
function removeMember(text: string, key: string): string {
  const { open, close, members } = topLevel(text);
  const index = members.findIndex((member) => member.key === key);
  const member = members[index]!;
  const next = members[index + 1];
  const previous = members[index - 1];
  if (next) return text.slice(0, member.start) + text.slice(next.start);
  if (previous) return text.slice(0, previous.valueEnd) + text.slice(member.valueEnd);
  return `${text.slice(0, open)}{}${text.slice(close + 1)}`;
}

// The whitespace that starts the line a key is on; undefined when the key shares its line with the brace or another
// key (a one-line file).
function indentOf(text: string, member: Member): string | undefined {
  const lineStart = text.lastIndexOf("\n", member.start) + 1;
  const indent = text.slice(lineStart, member.start);
  return lineStart > 0 && /^[ \t]+$/.test(indent) ? indent : undefined;
}

// The top-level object of valid JSON text: where its braces are and each key in it.
function topLevel(text: string): { open: number; close: number; members: Member[] } {
  let i = 0;
  const space = (): void => {
    while (" \t\r\n".includes(text[i] ?? "x")) i++;
  };
  const string = (): void => {
    for (i++; text[i] !== '"'; i += text[i] === "\\" ? 2 : 1);
    i++;
  };
  const value = (): void => {
    if (text[i] === '"') return string();
    // a number, true, false or null
    if (text[i] !== "[" && text[i] !== "{") {
      while (i < text.length && !",}] \t\r\n".includes(text[i]!)) i++;
      return;
    }
    let depth = 0;
    do {
      if (text[i] === '"') {
        string();
        continue;
      }
      if (text[i] === "[" || text[i] === "{") depth++;
      else if (text[i] === "]" || text[i] === "}") depth--;
      i++;
    } while (depth > 0);
  };
  space();
  const open = i++;
  const members: Member[] = [];
  for (space(); text[i] === '"'; space()) {
    const start = i;
    string();
    const keyEnd = i;
    space();
    i++;
    space();
    const valueStart = i;
    value();
    members.push({ key: JSON.parse(text.slice(start, keyEnd)) as string, start, keyEnd, valueStart, valueEnd: i });
    space();
    if (text[i] === ",") i++;
  }
  return { open, close: i, members };
}
