import { UuldanaError, type ErrorCode } from "./errors.js";

// One key given twice in the same object: where each is (line and column count from 1).
export interface DuplicateKey {
  key: string;
  // the keys and indexes of the object that holds it, from the top
  path: string[];
  // the JSON pointer of the key, as in "/providers/0/env/HOME"
  pointer: string;
  first: KeyPlace;
  second: KeyPlace;
}

export interface KeyPlace {
  line: number;
  column: number;
  // the value's text, from its first to just after its last character
  valueStart: number;
  valueEnd: number;
}

// Parses JSON text; a syntax error names the file with its line and column, a key given twice both places.
// With within, only that top-level key (and what is inside it) is checked for duplicates: a package.json's "uuldana".
export function parseJson(text: string, file: string, code: ErrorCode = "E_JSON_SYNTAX", within?: string): unknown {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let data: unknown;
  try {
    data = JSON.parse(source);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const { line, column } = locateSyntaxError(source, reason);
    throw new UuldanaError(code, `${file}:${line}:${column}: invalid JSON`, {
      details: [`  ${describeSyntaxError(reason)}`],
      hint: "fix the JSON syntax at that line and column (a missing comma, quote or bracket is the usual cause)",
    });
  }
  let duplicate: DuplicateKey | undefined;
  try {
    duplicate = findDuplicateKeys(source, within)[0];
  } catch (error) {
    if (!(error instanceof JsonTooDeep)) throw error;
    throw new UuldanaError("E_JSON_TOO_DEEP", `${file}:${error.at.line}:${error.at.column}: nested more than ${MAX_DEPTH} levels deep`, {
      hint: "no uuldana file needs this depth: check that this is the file you meant",
    });
  }
  if (duplicate) throw duplicateKeyError(file, duplicate);
  return data;
}

// JSON text for a file uuldana writes: JSON.stringify's, with the controls it leaves raw (DEL and C1, U+007F to
// U+009F: U+009B is the one-character CSI) written as \u escapes too. C0 controls JSON.stringify escapes itself, so no
// file holds a raw control character, and the text parses back to the same value.
export function jsonText(value: unknown, space?: number): string {
  return escapeJsonControls(JSON.stringify(value, null, space));
}

// The same for JSON text from elsewhere (what an agent hands the status-line relay): a control character other than
// the whitespace between tokens can only stand inside a string, where the escape means the same character.
export function escapeJsonControls(text: string): string {
  return text.replace(RAW_CONTROLS, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

// Thrown by findDuplicateKeys for text nested deeper than any uuldana file needs.
export class JsonTooDeep extends Error {
  constructor(readonly at: KeyPlace) {
    super(`nested more than ${MAX_DEPTH} levels deep at ${at.line}:${at.column}`);
  }
}

// Every key given twice in one object of valid JSON text, in the order the second ones appear.
export function findDuplicateKeys(text: string, within?: string): DuplicateKey[] {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const found: DuplicateKey[] = [];
  try {
    walkJson(source, (path, key, first, second) => {
      if (within !== undefined && (path.length === 0 ? key !== within : path[0] !== within)) return;
      found.push({ key, path, pointer: toPointer([...path, key]), first: place(source, first), second: place(source, second) });
    });
  } catch (error) {
    if (!(error instanceof TooDeep)) throw error;
    throw new JsonTooDeep(place(source, { key: error.offset, valueStart: error.offset, valueEnd: error.offset }));
  }
  return found.sort((a, b) => a.second.line - b.second.line || a.second.column - b.second.column);
}

// The error for a key given twice: both places, and why uuldana does not pick one.
export function duplicateKeyError(file: string, duplicate: DuplicateKey, code: ErrorCode = "E_JSON_DUPLICATE_KEY"): UuldanaError {
  const { first, second } = duplicate;
  return new UuldanaError(code, `${file}:${second.line}:${second.column}: duplicate key "${duplicate.key}"`, {
    details: [`  at ${duplicate.pointer}: given at ${first.line}:${first.column} and again at ${second.line}:${second.column}; JSON keeps only the last, so uuldana does not guess which you meant`],
    hint: `keep one of the two "${duplicate.key}" keys and remove the other`,
  });
}

// --- internal ---

// every control but the whitespace JSON allows between its tokens (tab, line feed, carriage return)
const RAW_CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g;

// Finds where JSON text first goes wrong, independent of the engine's message wording.
function locateSyntaxError(text: string, reason: string): { line: number; column: number } {
  const lineColumn = /line (\d+) column (\d+)/.exec(reason);
  if (lineColumn) return { line: Number(lineColumn[1]), column: Number(lineColumn[2]) };
  const offset = walkOrDepth(text);
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - (before.lastIndexOf("\n") + 1) + 1;
  return { line, column };
}

function walkOrDepth(text: string): number {
  try {
    return walkJson(text);
  } catch (error) {
    if (error instanceof TooDeep) return error.offset;
    throw error;
  }
}

function describeSyntaxError(reason: string): string {
  return reason
    .replace(/\s*(in JSON )?at position \d+.*$/s, "")
    .replace(/\s*\(line \d+ column \d+\)/, "")
    .replace(/, ".*" is not valid JSON$/s, "");
}

// Where a key and its value start and end in the text.
interface Span {
  key: number;
  valueStart: number;
  valueEnd: number;
}

function place(text: string, span: Span): KeyPlace {
  const before = text.slice(0, span.key);
  return { line: before.split("\n").length, column: span.key - (before.lastIndexOf("\n") + 1) + 1, valueStart: span.valueStart, valueEnd: span.valueEnd };
}

function toPointer(path: string[]): string {
  return path.map((part) => `/${part.replace(/~/g, "~0").replace(/\//g, "~1")}`).join("");
}

// Deeper than any file uuldana reads needs; the walk stops there instead of overflowing the stack.
const MAX_DEPTH = 512;

class TooDeep {
  constructor(readonly offset: number) {}
}

const NUMBER = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;

// Walks JSON text the way JSON.parse reads it; returns the offset where it goes wrong (the length when it is
// valid), and reports each key that its object already has.
function walkJson(text: string, onDuplicate?: (path: string[], key: string, first: Span, second: Span) => void): number {
  let i = 0;
  let depth = 0;
  const fail = (): never => {
    throw i;
  };
  const space = (): void => {
    while (i < text.length && " \t\r\n".includes(text[i]!)) i++;
  };
  const literal = (word: string): void => {
    for (const ch of word) if (text[i++] !== ch) (i--, fail());
  };
  const string = (): void => {
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text.charCodeAt(i) < 0x20) fail();
      i += text[i] === "\\" ? 2 : 1;
    }
    if (i >= text.length) fail();
    i++;
  };
  const number = (): void => {
    NUMBER.lastIndex = i;
    const match = NUMBER.exec(text);
    if (!match) fail();
    i += match![0].length;
  };
  const value = (path: string[]): void => {
    space();
    const ch = text[i];
    if (ch === "{") return object(path);
    if (ch === "[") return array(path);
    if (ch === '"') return string();
    if (ch === "t") return literal("true");
    if (ch === "f") return literal("false");
    if (ch === "n") return literal("null");
    number();
  };
  const object = (path: string[]): void => {
    if (++depth > MAX_DEPTH) throw new TooDeep(i);
    const seen = onDuplicate ? new Map<string, Span>() : undefined;
    i++;
    space();
    if (text[i] === "}") return void (i++, depth--);
    for (;;) {
      space();
      if (text[i] !== '"') fail();
      const keyAt = i;
      string();
      const key = seen ? (JSON.parse(text.slice(keyAt, i)) as string) : "";
      space();
      if (text[i] !== ":") fail();
      i++;
      space();
      const valueStart = i;
      value(seen ? [...path, key] : path);
      if (seen) {
        const span = { key: keyAt, valueStart, valueEnd: i };
        const first = seen.get(key);
        if (first) onDuplicate!(path, key, first, span);
        else seen.set(key, span);
      }
      space();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "}") return void (i++, depth--);
      fail();
    }
  };
  const array = (path: string[]): void => {
    if (++depth > MAX_DEPTH) throw new TooDeep(i);
    i++;
    space();
    if (text[i] === "]") return void (i++, depth--);
    for (let index = 0; ; index++) {
      value(onDuplicate ? [...path, String(index)] : path);
      space();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "]") return void (i++, depth--);
      fail();
    }
  };
  try {
    value([]);
    space();
    if (i < text.length) fail();
  } catch (offset) {
    if (typeof offset !== "number") throw offset;
    return Math.min(offset, text.length);
  }
  return text.length;
}
