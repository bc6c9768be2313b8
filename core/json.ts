import { UuldanaError, type ErrorCode } from "./errors.js";



// Parses JSON text; a syntax error names the file with its line and column.
export function parseJson(text: string, file: string, code: ErrorCode = "E_JSON_SYNTAX"): unknown {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return JSON.parse(source);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const { line, column } = locateSyntaxError(source, reason);
    throw new UuldanaError(code, `${file}:${line}:${column}: invalid JSON`, {
      details: [`  ${describeSyntaxError(reason)}`],
      hint: "fix the JSON syntax at that line and column (a missing comma, quote or bracket is the usual cause)",
    });
  }
}

// --- internal ---

// Finds where JSON text first goes wrong, independent of the engine's message wording.
function locateSyntaxError(text: string, reason: string): { line: number; column: number } {
  const lineColumn = /line (\d+) column (\d+)/.exec(reason);
  if (lineColumn) return { line: Number(lineColumn[1]), column: Number(lineColumn[2]) };
  const offset = findErrorOffset(text);
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - (before.lastIndexOf("\n") + 1) + 1;
  return { line, column };
}

function describeSyntaxError(reason: string): string {
  return reason
    .replace(/\s*(in JSON )?at position \d+.*$/s, "")
    .replace(/\s*\(line \d+ column \d+\)/, "")
    .replace(/, ".*" is not valid JSON$/s, "");
}

function findErrorOffset(text: string): number {
  let i = 0;
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
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!match || match[0] === "" || match[0] === "-") fail();
    i += match![0].length;
  };
  const value = (): void => {
    space();
    const ch = text[i];
    if (ch === "{") return object();
    if (ch === "[") return array();
    if (ch === '"') return string();
    if (ch === "t") return literal("true");
    if (ch === "f") return literal("false");
    if (ch === "n") return literal("null");
    number();
  };
  const object = (): void => {
    i++;
    space();
    if (text[i] === "}") return void i++;
    for (;;) {
      space();
      if (text[i] !== '"') fail();
      string();
      space();
      if (text[i] !== ":") fail();
      i++;
      value();
      space();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "}") return void i++;
      fail();
    }
  };
  const array = (): void => {
    i++;
    space();
    if (text[i] === "]") return void i++;
    for (;;) {
      value();
      space();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "]") return void i++;
      fail();
    }
  };
  try {
    value();
    space();
    if (i < text.length) fail();
  } catch (offset) {
    return Math.min(offset as number, text.length);
  }
  return text.length;
}
