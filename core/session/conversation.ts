import { stripEscapes } from "../base/ansi.js";
import { MARKER } from "../reader/glyphs.js";

// What a screen showed of a conversation, made fit to hand on: without escape and control sequences, without the
// agent's interface (chrome), without the message that stopped it, and without the handoff prompt it was started
// with. And the places in it a handoff needs: where a line the user typed was shown.

// A line without words: drawn only with marker glyphs (borders, logos and spinners in braille, an empty input box, a
// lone prompt mark or bullet).
const WORDLESS = new RegExp(`^(?:\\s|${MARKER})*$`, "u");

// One keyboard hint: a key, or keys held together, and what it does ("ctrl+o to expand", "Esc to cancel",
// "Press Ctrl+C again to exit").
const KEY_HINT = /^(?:press\s+|double[- ]tap\s+)?(?:(?:ctrl|control|alt|option|shift|cmd|command|meta)\s*\+\s*\w+(?:\s*\+\s*\w+)*|esc|escape|enter)\s+(?:again\s+)?to\s+\w[\w' -]{0,40}[.!]?$/i;
const HINT_SEPARATOR = /\s+[·•|]\s+|\s{2,}/;

// Characters that are not text: C0 and C1 controls, but the line break and the tab.
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

export interface ScreenCleaning {
  // the message that stopped the run: it and what follows it are left out, nothing before it
  stopText?: string | undefined;
  // the handoff prompt the run started with: agents show it back as the user's message, and it is already told
  prompt?: string | undefined;
  // the lines the user typed in this run: an earlier showing of the stop message before one of them is conversation
  typed?: readonly string[] | undefined;
  // true for a line that is this agent's own interface (its manifest's chrome patterns, its adapter's hook)
  chrome?: ((line: string) => boolean) | undefined;
}

// Text from an agent or a file as plain text: escape sequences and control characters removed.
export function plainText(text: string): string {
  return stripEscapes(text).replace(CONTROLS, "");
}

// A run's screen as conversation: plain text without chrome, panel borders, the stop message and what followed it
// (the rest of the limit screen), and the agent's echo of its handoff prompt.
export function cleanScreen(conversation: string, options: ScreenCleaning): string[] {
  // a line of chrome is known by its own look or by its words inside a panel's borders
  let lines = plainText(conversation)
    .split("\n")
    .filter((line) => !isChrome(line, options.chrome))
    .map(withoutBorders)
    .filter((line) => !isChrome(line, options.chrome));
  const cut = options.stopText ? findStop(lines, options.stopText, options.typed ?? []) : undefined;
  if (cut) lines = [...lines.slice(0, cut.line), ...(cut.before ? [cut.before] : [])];
  // the agent's echo of its own handoff prompt repeats the earlier runs; each run's words are carried once
  const prompt = normalize(options.prompt ?? "");
  const inPrompt = (line: string): boolean => prompt !== "" && normalize(line).length >= 8 && prompt.includes(normalize(line));
  return squeezeBlanks(lines.filter((line) => !inPrompt(line)));
}

// Where, in cleaned lines, the last showing of a text on lines of its own begins and ends (line numbers, the end
// exclusive): the echo of what the user typed, not the same words inside an answer. Undefined when it is not shown.
// Letters and digits are compared only: wrapping, borders, bullets, prompt marks and quotes do not count.
export function findShown(lines: readonly string[], text: string): { start: number; end: number } | undefined {
  const wanted = compact(text);
  if (wanted.length === 0) return undefined;
  const { joined, starts } = compactLines(lines);
  const ends = starts.map((_, index) => (index + 1 < starts.length ? starts[index + 1]! : joined.length));
  let at = joined.lastIndexOf(wanted);
  for (let looked = 0; at !== -1 && looked < MAX_SHOWINGS; looked++) {
    const start = lineAt(starts, at);
    const end = lineAt(starts, at + wanted.length - 1);
    if (starts[start] === at && ends[end] === at + wanted.length) return { start, end: end + 1 };
    at = at > 0 ? joined.lastIndexOf(wanted, at - 1) : -1;
  }
  return undefined;
}

// Every showing of each text on lines of its own (line numbers, the end exclusive), in the order they stand, with the
// letters it was found by: where a handoff may place the lines the user typed. Compared as findShown compares; a line
// the agent cut short with an ellipsis is a showing of any text it begins (cut), when it keeps enough of it.
export function findShowings(lines: readonly string[], texts: readonly string[]): Showing[] {
  const wanted = [...new Set(texts.map(compact))].filter((text) => text !== "");
  const { joined, starts } = compactLines(lines);
  const endOf = (line: number): number => (line + 1 < starts.length ? starts[line + 1]! : joined.length);
  const found: Showing[] = [];
  for (const text of wanted) {
    let at = joined.indexOf(text);
    for (let looked = 0; at !== -1 && looked < MAX_LOOKS; looked++) {
      const start = lineAt(starts, at);
      const end = lineAt(starts, at + text.length - 1);
      if (starts[start] === at && endOf(end) === at + text.length) found.push({ start, end: end + 1, text, cut: false });
      at = joined.indexOf(text, at + 1);
    }
  }
  found.push(...cutShowings(lines, wanted));
  return found.sort((a, b) => a.start - b.start || a.end - b.end);
}

// Where a text was shown on lines of its own, and by which letters: all of the text's, or (cut) its beginning's.
export interface Showing {
  start: number;
  end: number;
  text: string;
  cut: boolean;
}

// Lines with runs of blank lines made one, and none at either end.
export function squeezeBlanks(lines: readonly string[]): string[] {
  const kept: string[] = [];
  for (const line of lines) {
    if (!line.trim() && (kept.length === 0 || !kept[kept.length - 1]!.trim())) continue;
    kept.push(line);
  }
  while (kept.length && !kept[kept.length - 1]!.trim()) kept.pop();
  return kept;
}

// A text as the handoff compares it: lower case, blanks and marker glyphs made one blank.
export function normalize(text: string): string {
  return text
    .replace(SEPARATORS, " ")
    .replace(/[’‘]/g, "'")
    .trim()
    .toLowerCase();
}

// --- internal ---

// A line of chrome (input boxes, hints, status bars, borders — not conversation): by shapes any agent draws, or by
// what this agent is known to draw.
function isChrome(line: string, chrome: ((line: string) => boolean) | undefined): boolean {
  return WORDLESS.test(line) || isKeyHints(line) || chrome?.(line) === true;
}

// A line that is only keyboard hints, one or several side by side (at most 200 characters are read).
function isKeyHints(line: string): boolean {
  const text = line.trim();
  if (!text || text.length > 200) return false;
  return text.split(HINT_SEPARATOR).every((hint) => KEY_HINT.test(hint.replace(/^[([]|[)\]]$/g, "")));
}

// Where the stop message begins: its first line, and what stands on that line before it. Only letters and digits are
// compared, so a message the terminal or the agent wrapped (at any width, mid-word, inside a panel, with a bullet or
// an indent on each row) is found as it was read. The message stopped the agent where it was shown last; an earlier
// showing at a line's start with nothing the user typed between the two is the same message drawn again (a redraw),
// and goes too; one the agent went on past after the user spoke (dismissed, or quoted) is conversation. The whole
// message is looked for first; failing that, a part of it, from where that part would have begun.
function findStop(lines: readonly string[], stopText: string, typed: readonly string[]): { line: number; before: string } | undefined {
  const message = compact(stopText);
  if (message.length < 12) return undefined;
  const { joined, starts } = compactLines(lines);
  let found = -1;
  for (const [piece, offset] of pieces(message)) {
    const at = joined.lastIndexOf(piece);
    if (at !== -1) {
      found = Math.max(0, at - offset);
      break;
    }
  }
  if (found === -1) return undefined;
  // earlier showings of the whole message, drawn again before the last with no line of the user's between
  const spoken = typed.map(compact).filter((line) => line.length >= 2);
  let earlier = found > 0 ? joined.lastIndexOf(message, found - 1) : -1;
  for (let looked = 0; earlier !== -1 && looked < MAX_REDRAWS; looked++) {
    const between = joined.slice(earlier + message.length, found);
    const line = lineAt(starts, earlier);
    if (spoken.some((words) => between.includes(words)) || textBefore(lines[line]!, earlier - starts[line]!) !== "") break;
    found = earlier;
    earlier = earlier > 0 ? joined.lastIndexOf(message, earlier - 1) : -1;
  }
  const line = lineAt(starts, found);
  return { line, before: textBefore(lines[line]!, found - starts[line]!) };
}

// The parts of a message looked for when it is not shown whole, each with where it lies in the message: its
// beginning, then each sentence of it in turn.
function* pieces(message: string): Generator<[string, number]> {
  yield [message, 0];
  yield [message.slice(0, 24), 0];
  for (let at = 24; at + 24 <= message.length; at += 24) yield [message.slice(at, at + 24), at];
}

// Lines that end in an ellipsis, each a showing of the wanted texts it begins: an echo the agent cut short. Only one
// line, and only one that keeps CUT_LETTERS letters or more, so that a few common words do not stand for a request.
function cutShowings(lines: readonly string[], wanted: readonly string[]): Showing[] {
  const found: Showing[] = [];
  for (const [line, shown] of lines.entries()) {
    const end = shown.trimEnd();
    if (!end.endsWith("…") && !end.endsWith("...")) continue;
    const text = compact(end);
    if (text.length >= CUT_LETTERS && wanted.some((one) => one.length > text.length && one.startsWith(text))) found.push({ start: line, end: line + 1, text, cut: true });
  }
  return found;
}

// The compared letters of each line, joined, and where each line's begin in the join; made once for a list of lines
// that is looked through for many texts (the lines the user typed).
function compactLines(lines: readonly string[]): { joined: string; starts: number[] } {
  const known = compacted.get(lines);
  if (known && known.count === lines.length) return known;
  const made = { ...joinCompact(lines), count: lines.length };
  compacted.set(lines, made);
  return made;
}

const compacted = new WeakMap<readonly string[], { joined: string; starts: number[]; count: number }>();

function joinCompact(lines: readonly string[]): { joined: string; starts: number[] } {
  const starts: number[] = [];
  let length = 0;
  const parts = lines.map((line) => {
    starts.push(length);
    const part = compact(line);
    length += part.length;
    return part;
  });
  return { joined: parts.join(""), starts };
}

// The line a compared letter is on: the last line beginning at or before it (lines without letters before it
// begin where it does).
function lineAt(starts: readonly number[], at: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (starts[middle]! <= at) low = middle;
    else high = middle - 1;
  }
  return low;
}

// What a line holds before the point where `skip` of its compared characters lie behind; a lone bullet or border
// left there is not words. One pass over the line: a hostile line of any length costs its length.
function textBefore(line: string, skip: number): string {
  if (skip <= 0) return "";
  let kept = 0;
  let at = 0;
  for (const char of line) {
    // the punctuation that ends the words before the message is theirs
    if (kept === skip && !/\p{P}/u.test(char)) break;
    kept += compact(char).length;
    at += char.length;
  }
  if (kept !== skip) return "";
  const before = line.slice(0, at).trimEnd();
  return /[\p{L}\p{N}]/u.test(before) ? before : "";
}

// A line without a panel's side borders, which are drawing, not words. Trimmed first: a regular expression that
// looked for blanks and a border at the end would retry at every blank of a long run.
function withoutBorders(line: string): string {
  const text = line.replace(/^\s*[\u2500-\u257f]\s?/, "").trimEnd();
  return /[\u2500-\u257f]$/.test(text) ? text.slice(0, -1).trimEnd() : text;
}

// The letters and digits of a text, in lower case: what is compared to find a message however it was drawn.
export function compact(text: string): string {
  return text.toLowerCase().replace(NOT_WORDS, "");
}

const NOT_WORDS = /[^\p{L}\p{N}]+/gu;
// How many earlier showings of a stop message are looked at as redraws of it, and of a line the user typed for its echo.
const MAX_REDRAWS = 50;
const MAX_SHOWINGS = 200;
// How many places a typed line's letters are looked at for a showing on lines of its own.
const MAX_LOOKS = 10_000;
// The fewest letters of a request a line cut short with an ellipsis must keep to be taken for its echo.
const CUT_LETTERS = 12;
// What normalize turns into a blank: blanks and marker glyphs (borders, bullets, prompt marks).
const SEPARATORS = new RegExp(`(?:\\s|${MARKER})+`, "gu");
