import { stripEscapes } from "../base/ansi.js";
import { BORDER, MARKER } from "./glyphs.js";

// How the reader cuts what an agent drew into messages as a person reads them: blocks of lines that belong together,
// their sentences, and the lines around a block (the paragraph above it, the rest of its message below).

export interface Block {
  text: string;
  // the index of its first line in the text given
  line: number;
  // each with its index in the text given
  lines: { raw: string; text: string; index: number }[];
  // every line as drawn, those that clean to nothing too
  raws: string[];
  // the lines of the same paragraph above the block, as drawn (at most PRIOR_LINES)
  prior: string[];
  // the rest of the same message after the block, cleaned: the following lines up to a blank line (and the next
  // paragraph too when the block's own ends by introducing it with a colon) — where a reset or an API error's
  // details often stand
  after: string;
  // the block's text and the lines after it, as one text
  message: string;
}

// The sentences of a block with where each begins: split after a sentence's end, at a middle dot or bar between
// parts of a status line, and where a line begins a new sentence although the one above did not end with a stop
// (a heading above its question: "Out of credits" / "Open the billing page?").
export function sentencesOf(block: Block): { sentence: string; at: number }[] {
  const pieces: { text: string; at: number }[] = [];
  let start = 0;
  let offset = 0;
  for (let index = 0; index < block.lines.length; index++) {
    const line = block.lines[index]!.text;
    if (index > 0 && NEW_SENTENCE.test(line) && !CARRIES_ON.test(block.lines[index - 1]!.text)) {
      pieces.push({ text: block.text.slice(start, offset - 1), at: start });
      start = offset;
    }
    offset += line.length + 1;
  }
  pieces.push({ text: block.text.slice(start), at: start });
  const sentences: { sentence: string; at: number }[] = [];
  for (const piece of pieces) {
    let from = 0;
    for (const sentence of piece.text.split(/(?<=[.!?])\s+(?=[A-Z/"'(])|(?<=[。！？])\s*(?=\S)|\s+[·∙•|]\s+/)) {
      const at = piece.text.indexOf(sentence, from);
      from = at + sentence.length;
      sentences.push({ sentence, at: piece.at + at });
    }
  }
  return sentences;
}

// a capitalised word, and a line end that leaves its sentence open
const NEW_SENTENCE = /^[A-Z][a-z']+\b/;
const CARRIES_ON = /[,;:&/+(\-–—]$|\b(?:and|or|to|the|a|an|of|your|you|for|with|in|on|at|by|from|until|is|are|be|has|have|will|can|please|using|use)$/i;

// Where the line that holds a place of the block's text begins and ends in that text.
export function lineAround(block: Block, at: number): { start: number; end: number } {
  let start = 0;
  for (const line of block.lines) {
    const end = start + line.text.length;
    if (at <= end) return { start, end };
    start = end + 1;
  }
  return { start: 0, end: block.text.length };
}

// Marker glyphs before a message: bullets, spinner frames, prompt marks, borders.
export const MARKS = new RegExp(`^(?:${MARKER}+\\s*)+`, "u");
const MARKED = new RegExp(`^\\s*(?:${MARKER}+\\s*)+`, "u");
// a line that begins with a marker glyph other than a border, or a dash (after a panel's border), begins a message;
// so does one that begins with a word in lower case and a colon, a log line's label ("working: …", "note: …"), never
// a sentence wrapped from the line above (one test each, the label an alternative: it is asked of most lines)
const LABEL = "[a-z][a-z-]*:";
const MESSAGE_START = new RegExp(`^\\s*(?:(?:[\\u2500-\\u257f]\\s*)?(?:(?![${BORDER}])${MARKER}|-)|${LABEL})\\s`, "u");
// the same tests for a line of plain ASCII, where the only marker glyphs are > and *: most lines agents draw
const ASCII_MARKED = /^\s*[>*]/;
const ASCII_MESSAGE_START = new RegExp(`^\\s*(?:[>*-]|${LABEL})\\s`);
const startsMessage = (line: string): boolean => (/^[\x20-\x7e]*$/.test(line) ? ASCII_MESSAGE_START : MESSAGE_START).test(line);
const BLANK_OR_BORDER = new RegExp(`[\\s${BORDER}]`);

const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;
const CONTROLS = new RegExp(CONTROL.source, "g");
// a character that is neither blank nor a border's
const DRAWN = /[^\s\u2500-\u257f]/;

// Groups lines into messages as a person reads them: a message ends at a blank line, after a line that ended a
// sentence, or where a line begins with a bullet, a marker or a label; a phrase wrapped across lines is read whole.
// Only messages that could be a stop are cleaned (escape sequences, borders, bullets removed).
export function splitBlocks(text: string, mayStop: (text: string) => boolean): Block[] {
  const rawLines = stripEscapes(text).split(/\r?\n|\r/);
  const groups: { first: number; raws: string[] }[] = [];
  let group: { first: number; raws: string[] } | undefined;
  rawLines.forEach((raw, index) => {
    // (looked for before anything is copied: most lines have no control character)
    const bare = trimEndOf(CONTROL.test(raw) ? raw.replace(CONTROLS, "") : raw, BLANK_OR_BORDER);
    if (!DRAWN.test(bare)) {
      group = undefined;
      return;
    }
    const previous = group?.raws[group.raws.length - 1];
    // a line ending in a parenthesis ends the message unless the next goes on in lower case (a wrapped sentence)
    if (group && previous !== undefined && (/[.!?]$/.test(previous) || (previous.endsWith(")") && !/^\s*[a-z]/.test(bare)) || startsMessage(bare))) group = undefined;
    if (!group) {
      group = { first: index, raws: [] };
      groups.push(group);
    }
    group.raws.push(bare);
  });
  const blocks: Block[] = [];
  for (const { first, raws } of groups) {
    if (!mayStop(raws.join(" "))) continue;
    const lines = raws.map((raw, index) => ({ raw, text: cleanLine(raw), index: first + index })).filter((line) => line.text);
    blocks.push(new DrawnBlock(lines.map((line) => line.text).join(" "), first, lines, raws, rawLines));
  }
  return blocks;
}

// A block as splitBlocks finds it: the lines around it are read only when a check asks for them.
class DrawnBlock implements Block {
  private priorRead: string[] | undefined;
  private afterRead: string | undefined;
  private messageRead: string | undefined;

  constructor(
    readonly text: string,
    readonly line: number,
    readonly lines: Block["lines"],
    readonly raws: string[],
    private readonly rawLines: readonly string[],
  ) {}

  get prior(): string[] {
    return (this.priorRead ??= priorLines(this.rawLines, this.line));
  }

  get after(): string {
    return (this.afterRead ??= followingLines(this.rawLines, this.line + this.raws.length));
  }

  get message(): string {
    return (this.messageRead ??= this.after ? `${this.text} ${this.after}` : this.text);
  }
}

const PRIOR_LINES = 6;

// The lines above a block up to a blank line, nearest last.
function priorLines(rawLines: readonly string[], first: number): string[] {
  const lines: string[] = [];
  for (let index = first - 1; index >= 0 && lines.length < PRIOR_LINES && rawLines[index]!.trim(); index--) lines.unshift(rawLines[index]!);
  return lines;
}

const AFTER_LINES = 12;
const AFTER_CHARS = 1200;

// The lines of the same message after a block: up to a blank line, or past one when the paragraph ends in a colon
// (a list of options follows), at most AFTER_LINES lines and AFTER_CHARS characters.
function followingLines(rawLines: readonly string[], from: number): string {
  const parts: string[] = [];
  let size = 0;
  let previous = from > 0 ? rawLines[from - 1]!.trimEnd() : "";
  for (let index = from; index < rawLines.length && parts.length < AFTER_LINES && size < AFTER_CHARS; index++) {
    // only what a test of words needs: the line's own blanks and borders off, not its marker glyphs
    const text = trimEndOf(rawLines[index]!, BLANK_OR_BORDER).replace(/^[\s\u2500-\u257f]+/, "");
    if (!text) {
      if (!previous.endsWith(":")) break;
      previous = "";
      continue;
    }
    parts.push(text);
    size += text.length + 1;
    previous = text;
  }
  return parts.join(" ").replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, "").slice(0, AFTER_CHARS);
}

function cleanLine(raw: string): string {
  // plain ASCII text needs no more than its spaces tidied
  // (of ASCII, only > and * are marker glyphs: the cheap test says what MARKED would)
  if (/^[\x20-\x7e]*$/.test(raw) && !ASCII_MARKED.test(raw)) return raw.replace(/\s+/g, " ").trim();
  // its blanks and borders at the end are off already
  return raw
    .replace(MARKED, "")
    .replace(/[’‘]/g, "'")
    .replace(/\s+/g, " ")
    .trim();
}

// A text without the run of characters at its end that each pass the test, found from the end: a regular expression
// anchored at the end would retry at every character of a long run.
function trimEndOf(text: string, char: RegExp): string {
  let end = text.length;
  while (end > 0 && char.test(text[end - 1]!)) end--;
  return text.slice(0, end);
}
