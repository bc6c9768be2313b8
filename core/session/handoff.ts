import { stripEscapes } from "../base/ansi.js";
import { escapeControls } from "../base/safe-text.js";
import { MARKER } from "../reader/glyphs.js";

// One run's part of the conversation, for the next agent.
export interface RunPart {
  entry: string;
  name: string;
  conversation: string;
  // the message that stopped this run: it and what follows it are left out, nothing before it
  stopText?: string;
  // the handoff prompt this run started with: agents show it back as the user's message, and it is already told
  prompt?: string;
  // true for a line that is this agent's own interface (its manifest's chrome patterns, its adapter's hook)
  chrome?: (line: string) => boolean;
}

export interface HandoffOptions {
  parts: readonly RunPart[];
  // the longest prompt one argument may carry here
  maxChars: number;
  // where the whole transcript is saved when the prompt must carry only its end
  transcriptFile: string;
  // the session's redactor: the next agent sees [redacted] where a secret was
  redact?: (text: string) => string;
}

export interface Handoff {
  prompt: string;
  transcript: string;
  // true when the prompt carries only the end of the transcript, and names transcriptFile
  trimmed: boolean;
}

// The longest single argument the system takes, with room to spare (Linux: 128 KiB; Windows: ~32 K characters).
export const MAX_PROMPT_CHARS = process.platform === "win32" ? 30_000 : 120_000;

// A line without words: drawn only with marker glyphs (borders, logos and spinners in braille, an empty input box, a
// lone prompt mark or bullet).
const WORDLESS = new RegExp(`^(?:\\s|${MARKER})*$`, "u");

// One keyboard hint: a key, or keys held together, and what it does ("ctrl+o to expand", "Esc to cancel",
// "Press Ctrl+C again to exit").
const KEY_HINT = /^(?:press\s+|double[- ]tap\s+)?(?:(?:ctrl|control|alt|option|shift|cmd|command|meta)\s*\+\s*\w+(?:\s*\+\s*\w+)*|esc|escape|enter)\s+(?:again\s+)?to\s+\w[\w' -]{0,40}[.!]?$/i;
const HINT_SEPARATOR = /\s+[·•|]\s+|\s{2,}/;

// A line that is only keyboard hints, one or several side by side (at most 200 characters are read).
function isKeyHints(line: string): boolean {
  const text = line.trim();
  if (!text || text.length > 200) return false;
  return text.split(HINT_SEPARATOR).every((hint) => KEY_HINT.test(hint.replace(/^[([]|[)\]]$/g, "")));
}

// A line of chrome (input boxes, hints, status bars, borders — not conversation): by shapes any agent draws, or by
// what this agent is known to draw, which comes with its part.
function isChrome(line: string, part: RunPart): boolean {
  return WORDLESS.test(line) || isKeyHints(line) || part.chrome?.(line) === true;
}

// The text the next agent gets: a preamble in uuldana's words, then the conversation of every run so far, without
// the message that stopped each agent, without chrome, without any escape or control sequence and without secrets.
export function buildHandoff(options: HandoffOptions): Handoff {
  const redact = options.redact ?? ((text: string): string => text);
  const previous = options.parts[options.parts.length - 1]!;
  // names come from manifests and the journal: shown, never obeyed
  const label = (part: RunPart): string => `${escapeControls(part.name)} (${escapeControls(part.entry)})`;
  const sections = options.parts.map((part) => `--- with ${label(part)} ---\n${cleanConversation(part)}`);
  const transcript = redact(sections.join("\n\n").trim());
  const preamble = redact([
    `You are continuing a conversation that began with ${label(previous)}, whose usage allowance ran out.`,
    "Below is the conversation as it was shown on screen. Hidden reasoning, the previous agent's memory, approvals it had",
    "been given and tool calls still running did not carry over: check the state of the files before relying on them.",
    "Continue with the user's last request.",
  ].join(" "));
  const whole = `${preamble}\n\n${transcript}\n`;
  if (whole.length <= options.maxChars) return { prompt: whole, transcript, trimmed: false };
  const head = `${preamble}\n\nThe whole conversation is in ${options.transcriptFile}; its last part follows.\n\n`;
  const tail = transcript.slice(-(options.maxChars - head.length - 10));
  return { prompt: `${head}…${tail.slice(tail.indexOf("\n") + 1)}\n`, transcript, trimmed: true };
}

// --- internal ---

function cleanConversation(part: RunPart): string {
  let lines = stripEscapes(part.conversation)
    .replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, "")
    .split("\n")
    .filter((line) => !isChrome(line, part))
    .map(withoutBorders);
  // the message that stopped the agent, and what follows it (the rest of its limit screen, the exit keys at work),
  // are not conversation; everything before it is, even on the line where it begins
  const cut = part.stopText ? findMessage(lines, part.stopText) : undefined;
  if (cut) lines = [...lines.slice(0, cut.line), ...(cut.before ? [cut.before] : [])];
  // the agent's echo of its own handoff prompt repeats the earlier runs; each run's words are carried once
  const prompt = normalize(part.prompt ?? "");
  const inPrompt = (line: string): boolean => prompt !== "" && normalize(line).length >= 8 && prompt.includes(normalize(line));
  return lines
    .filter((line) => !inPrompt(line))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

// Where the stop message begins: its first line, and what stands on that line before it. Blanks do not count (the
// reader joins the rows a terminal wrapped with a space, the screen model without one). The message stopped the
// agent where it was shown last: an earlier showing the agent went on past (dismissed, or quoted by the user) is
// conversation. The whole message is looked for first; failing that, its beginning.
function findMessage(lines: readonly string[], stopText: string): { line: number; before: string } | undefined {
  const message = compact(stopText);
  if (message.length < 12) return undefined;
  const compacted = lines.map(compact);
  const starts: number[] = [];
  let length = 0;
  for (const line of compacted) {
    starts.push(length);
    length += line.length;
  }
  const joined = compacted.join("");
  const found = [joined.lastIndexOf(message), joined.lastIndexOf(message.slice(0, 20))].find((at) => at !== -1);
  if (found === undefined) return undefined;
  const line = starts.findLastIndex((start, index) => start <= found && compacted[index] !== "");
  return { line, before: textBefore(lines[line]!, found - starts[line]!) };
}

// What a line holds before the point where `skip` of its compacted characters lie behind; a lone bullet or border
// left there is not words. One pass over the line: a hostile line of any length costs its length.
function textBefore(line: string, skip: number): string {
  if (skip <= 0) return "";
  let kept = 0;
  let at = 0;
  for (const char of line) {
    if (kept === skip) break;
    kept += SEPARATOR.test(char) ? 0 : char.toLowerCase().length;
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

// A line as the handoff compares it: normalized, without blanks.
function compact(text: string): string {
  return normalize(text).replace(/ /g, "");
}

// What normalize turns into a blank: blanks and marker glyphs (borders, bullets, prompt marks).
const SEPARATOR = new RegExp(`\\s|${MARKER}`, "u");
const SEPARATORS = new RegExp(`(?:\\s|${MARKER})+`, "gu");

function normalize(text: string): string {
  return text
    .replace(SEPARATORS, " ")
    .replace(/[’‘]/g, "'")
    .trim()
    .toLowerCase();
}
