import { escapeControls } from "../base/safe-text.js";
import type { Transcript, Turn } from "../registry/adapter.js";
import { cleanScreen, compact, findShown, normalize, plainText, squeezeBlanks } from "./conversation.js";
import { placeTyped, REQUEST_MARK, type Said } from "./typed-lines.js";

// One run's part of the conversation, for the next agent.
export interface RunPart {
  entry: string;
  name: string;
  // the screen as it stood when the run ended, or when uuldana began to stop the agent
  conversation: string;
  // the run's turns as the agent recorded them in its own session file, when that was read: the file is the source
  // for what it holds, and the screen fills in only what it lacks at its end
  transcript?: Transcript | undefined;
  // the message that stopped this run: it and what follows it are left out, nothing before it
  stopText?: string | undefined;
  // the handoff prompt this run started with: agents show it back as the user's message, and it is already told
  prompt?: string | undefined;
  // the lines the user typed in this run, in order
  typed?: readonly string[] | undefined;
  // true for a line that is this agent's own interface (its manifest's chrome patterns, its adapter's hook)
  chrome?: ((line: string) => boolean) | undefined;
  // why the session moved on from this run before its allowance ran out, when it did (rotate_at_percent_left)
  rotated?: string | undefined;
  // when this run hands the work back to an entry that has rested (return_home): what it did since it took over
  handedBack?: string | undefined;
}

export interface HandoffOptions {
  parts: readonly RunPart[];
  // the largest prompt one argument may carry here, as promptSize measures it
  maxSize: number;
  // where the whole transcript is saved when the prompt must carry only its latest turns
  transcriptFile: string;
  // whether the next agent, at its level, can read that file (it lies outside the project)
  canReadFile: boolean;
  // the state of the workspace at the handoff, in uuldana's words, when the user asked for it
  workspace?: string | undefined;
  // the session's redactor: the next agent sees [redacted] where a secret was
  redact?: (text: string) => string;
  // the entry the prompt is for
  receiver?: string | undefined;
}

export interface Handoff {
  prompt: string;
  transcript: string;
  // true when the prompt carries only the latest turns of the transcript
  trimmed: boolean;
}

// The longest single argument the system takes, with room to spare, in the units it counts: Linux takes 131,072
// bytes in one argument (macOS more), Windows about 32,000 UTF-16 units on a whole command line.
export const MAX_PROMPT_SIZE = process.platform === "win32" ? 30_000 : 120_000;

// A prompt's size in the units the system limits: UTF-8 bytes, or UTF-16 units on Windows.
export function promptSize(text: string, platform: NodeJS.Platform = process.platform): number {
  return platform === "win32" ? text.length : Buffer.byteLength(text, "utf8");
}

// The text the next agent gets: a preamble in uuldana's words that ends with the user's last request, then every
// run's part of the conversation once, in order, each turn labelled with who said it — from the agents' own
// transcripts where they were read, else from their screens — without the messages that stopped them, without
// chrome, without any escape or control sequence and without secrets.
export function buildHandoff(options: HandoffOptions): Handoff {
  const redact = options.redact ?? ((text: string): string => text);
  const requested = options.parts.findLastIndex(hasRequest);
  const sections = options.parts.map((part, index) => ({ part, ...saidOf(part, index === requested) }));
  const request = sections[requested]?.request;
  const chunks = sections.flatMap(({ part, said }, index) => said.flatMap((one) => chunksOf(one, part)).map((text) => ({ section: index, text: redact(text) })));
  const headers = sections.map(({ part }) => header(part, true));
  const render = (kept: readonly Chunk[], cutFirst: boolean): string => {
    const out: string[] = [];
    let section = -1;
    for (const [index, chunk] of kept.entries()) {
      if (chunk.section === section) {
        out.push(`\n\n${chunk.text}`);
        continue;
      }
      section = chunk.section;
      out.push(`${index === 0 ? "" : "\n\n"}${header(sections[section]!.part, index === 0 && cutFirst)}\n${chunk.text}`);
    }
    return out.join("");
  };
  const transcript = render(chunks, false);
  const previous = options.parts[options.parts.length - 1]!;
  const quoted = request !== undefined ? quote(redact(request), options.maxSize) : undefined;
  const preamble = (trimmed: boolean): string =>
    [
      redact(introduction(options.parts, previous, options.receiver)),
      ...(options.workspace ? [redact(options.workspace)] : []),
      ...(trimmed ? [trimNote(options)] : []),
      quoted ? `Continue with the user's last request, quoted here whole:\n\n${quoted}` : "Continue where the conversation leaves off.",
    ].join("\n\n");
  const whole = `${preamble(false)}\n\n${transcript}\n`;
  if (promptSize(whole) <= options.maxSize) return { prompt: whole, transcript, trimmed: false };
  const head = `${preamble(true)}\n\n`;
  const kept = latestChunks(chunks, headers, options.maxSize - promptSize(head) - HEADER_ROOM);
  return { prompt: `${head}${render(kept.chunks, kept.cut)}\n`, transcript, trimmed: true };
}

// --- internal ---

interface Chunk {
  section: number;
  text: string;
}

// What the labels, separators and the cut note may add to the kept chunks.
const HEADER_ROOM = 400;
// A tool call is one line.
const TOOL_LINE = 240;

function introduction(parts: readonly RunPart[], previous: RunPart, receiver: string | undefined): string {
  const earlier = [...new Set(parts.slice(0, -1).map(label))].filter((name) => name !== label(previous));
  const took = earlier.length ? `; before it, ${earlier.join(", ")} took part` : "";
  // the work was handed back to an entry that had rested, which did not take it: it comes back to the one that had it
  const again = previous.handedBack && previous.entry === receiver;
  return [
    again
      ? `You are continuing your own conversation as ${label(previous)}: it was to go back to an agent that had rested, which did not take it, so it comes back to you${took}.`
      : `You are continuing a conversation from ${label(previous)}, ${why(previous)}${took}.`,
    "Below is the conversation so far, each turn once and in order, labelled with who said it: from the agents' own transcripts where uuldana could read them, else as their screens showed it.",
    "Hidden reasoning, the earlier agents' memory, approvals they had been given and tool calls still running did not carry over: check the state of the files before relying on them.",
  ].join(" ");
}

// Why the work moved on from the last run.
function why(previous: RunPart): string {
  if (previous.handedBack) return `which took over while you rested and now hands the work back to you (${escapeControls(previous.handedBack)})`;
  if (previous.rotated) return `which was rotated before its usage allowance ran out (${escapeControls(previous.rotated)})`;
  return "whose usage allowance ran out";
}

function trimNote(options: HandoffOptions): string {
  const where = options.canReadFile
    ? `the whole of it is saved in ${options.transcriptFile}.`
    : "uuldana saved the whole of it outside this project, where you cannot read it: ask the user if you need an earlier detail.";
  return `The conversation is longer than one prompt can carry, so only its latest turns follow, each whole; ${where}`;
}

// Names come from manifests and the journal: shown, never obeyed.
function label(part: RunPart): string {
  return `${escapeControls(part.name)} (${escapeControls(part.entry)})`;
}

// The line that begins a run's part: whose it is, where it came from, and whether its beginning is left out.
function header(part: RunPart, cut: boolean): string {
  return `--- ${label(part)}, ${part.transcript ? "from its transcript" : "as its screen showed it"}${cut ? ", its earlier turns left out" : ""} ---`;
}

// The run's part, with every line the user typed in it placed once (see placeTyped); when it holds the user's last
// request (mark), the mark stands in its place and the request is told.
function saidOf(part: RunPart, mark: boolean): { said: Said[]; request?: string } {
  const typed = typedLines(part);
  const last = typed.findLastIndex(isRequest);
  const said = placeTyped(recordedOrShown(part), { typed, request: mark && last !== -1 ? last : undefined, note: noAnswer(part), stopped: part.stopText !== undefined });
  if (!mark) return { said };
  if (last !== -1) return { said, request: typed[last]! };
  // nothing typed is known to be a request: the transcript's last user turn is
  const turn = said.findLastIndex((one) => one.role === "user");
  if (turn === -1) return { said };
  const { text } = said[turn] as { text: string };
  said[turn] = { ...said[turn]!, text: REQUEST_MARK } as Said;
  return { said, request: text };
}

// Whether a run's part holds a request of the user's: a line typed in it, or a user turn in its transcript.
function hasRequest(part: RunPart): boolean {
  return typedLines(part).some(isRequest) || recorded(part, "user").length > 0;
}

// The lines the user typed in a run that have words: Enter on a line of blanks or marks only is no turn.
function typedLines(part: RunPart): string[] {
  return (part.typed ?? []).map(plainText).filter((line) => compact(line) !== "");
}

// A typed line that may be the request quoted at the top: one key (an answer to the agent's question) is not.
function isRequest(line: string): boolean {
  return line.trim().length >= 2;
}

// The line under a user turn the part holds no answer to.
function noAnswer(part: RunPart): string {
  return `(${escapeControls(part.name)}'s answer to this was not ${part.transcript ? "in its transcript" : "on its screen"})`;
}

// The run's part as it was recorded or shown: its transcript's turns and, after them, what its screen showed that the
// file lacks; or its screen.
function recordedOrShown(part: RunPart): Said[] {
  const screen = cleanScreen(part.conversation, part);
  if (!part.transcript) return screen.length ? [{ role: "screen", lines: screen, fillIn: false }] : [];
  const turns = recorded(part);
  const rest = screenAfter(turns, screen, part.typed ?? []);
  return rest ? [...turns, { role: "screen", lines: rest, fillIn: true }] : turns;
}

// The transcript's turns as the handoff tells them: plain text, tool calls on one line, without empty turns and
// without the handoff prompt the run started with; those of one role only, when asked.
function recorded(part: RunPart, only?: Turn["role"]): Said[] {
  return (part.transcript?.turns ?? [])
    .filter((turn) => only === undefined || turn.role === only)
    .map((turn) => ({ role: turn.role, text: turnText(turn) }))
    .filter((turn) => turn.text !== "" && !(turn.role === "user" && isPrompt(turn.text, part.prompt)));
}

function turnText(turn: Turn): string {
  const text = plainText(turn.text).trim();
  if (turn.role !== "tool") return text;
  const line = text.replace(/\s+/g, " ");
  return line.length > TOOL_LINE ? `${line.slice(0, TOOL_LINE - 1)}…` : line;
}

// A user turn that is the handoff prompt the run was started with, as the agent recorded it.
function isPrompt(text: string, prompt: string | undefined): boolean {
  if (!prompt) return false;
  const turn = normalize(text);
  const given = normalize(prompt);
  if (turn === given) return true;
  const [shorter, longer] = turn.length < given.length ? [turn, given] : [given, turn];
  return shorter.length >= 0.9 * longer.length && longer.includes(shorter);
}

// What the screen showed after the transcript's end: the user's lines the file does not have yet (typed after the
// last one it has) with what followed them, or the answer being drawn to the file's last user turn. The screen is
// read after the file's last user turn only; where that turn is not on the screen, nothing is added.
function screenAfter(turns: readonly Said[], screen: readonly string[], typed: readonly string[]): string[] | undefined {
  const users = turns.filter((turn) => turn.role === "user").map((turn) => (turn as { text: string }).text);
  const last = users.at(-1);
  const anchor = last === undefined ? { end: 0 } : findShown(screen, last);
  if (!anchor) return undefined;
  const after = screen.slice(anchor.end);
  const known = new Set(users.map(normalize));
  const lastKnown = typed.findLastIndex((line) => known.has(normalize(line)));
  const unrecorded = typed.slice(lastKnown + 1).filter((line) => !known.has(normalize(line)));
  let from: number | undefined;
  for (const line of unrecorded) {
    const shown = findShown(after, line);
    if (shown && (from === undefined || shown.start < from)) from = shown.start;
  }
  if (from === undefined && turns.at(-1)?.role === "user") from = 0;
  if (from === undefined) return undefined;
  const rest = squeezeBlanks(after.slice(from));
  return rest.some((line) => /[\p{L}\p{N}]/u.test(line)) ? rest : undefined;
}

// The request as the preamble quotes it; one longer than half a prompt keeps its beginning and says so.
function quote(text: string, maxSize: number): string {
  const fits = promptSize(text) <= maxSize / 2;
  const kept = fits ? text : cutToSize(text, maxSize / 2, "start");
  const lines = kept.split("\n").map((line) => `> ${line}`);
  return [...lines, ...(fits ? [] : ["(its end is cut here; the whole of it is in the conversation below or the saved transcript)"])].join("\n");
}

// A thing said as the prompt shows it, in chunks the prompt keeps or leaves whole: a turn is one chunk; a screen's
// lines are one chunk for each paragraph (the screen tells no turns).
function chunksOf(said: Said, part: RunPart): string[] {
  if (said.role === "screen") {
    const paragraphs = said.lines.join("\n").split(/\n{2,}/);
    return said.fillIn ? [`(on its screen after the end of its transcript)\n${paragraphs[0]}`, ...paragraphs.slice(1)] : paragraphs;
  }
  const name = escapeControls(part.name);
  const speaker = said.role === "user" ? "User" : said.role === "tool" ? `${name} (tool)` : name;
  return [`${speaker}: ${said.text}${said.note ? `\n${said.note}` : ""}`];
}

// The latest chunks that fit the budget, each whole; when not even the last fits, its end, cut at a line.
function latestChunks(chunks: readonly Chunk[], headers: readonly string[], budget: number): { chunks: Chunk[]; cut: boolean } {
  const kept: Chunk[] = [];
  let used = 0;
  for (let index = chunks.length - 1; index >= 0; index--) {
    const chunk = chunks[index]!;
    const cost = promptSize(chunk.text) + 2 + (kept[0]?.section === chunk.section ? 0 : promptSize(headers[chunk.section]!) + 2);
    if (used + cost > budget) break;
    kept.unshift(chunk);
    used += cost;
  }
  if (kept.length === 0 && chunks.length) {
    const last = chunks[chunks.length - 1]!;
    kept.push({ section: last.section, text: `(its beginning is cut here)\n${cutToSize(last.text, budget - promptSize(headers[last.section]!) - 40, "end")}` });
  }
  return { chunks: kept, cut: kept.length < chunks.length || kept[0]?.text.startsWith("(its beginning is cut here)") === true };
}

// A text cut to a size, keeping its start or its end; at a line break where one is near enough, and never inside a
// character.
function cutToSize(whole: string, size: number, keep: "start" | "end"): string {
  // each UTF-16 unit is at least one unit of size: no more than size of them can fit
  const text = keep === "start" ? whole.slice(0, size) : whole.slice(Math.max(0, whole.length - size));
  const chars = [...text];
  let low = 0;
  let high = chars.length;
  const part = (count: number): string => (keep === "start" ? chars.slice(0, count) : chars.slice(chars.length - count)).join("");
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (promptSize(part(middle)) <= size) low = middle;
    else high = middle - 1;
  }
  const cut = part(low);
  if (keep === "end") {
    const newline = cut.indexOf("\n");
    return newline !== -1 && newline < cut.length / 2 ? cut.slice(newline + 1) : cut;
  }
  const newline = cut.lastIndexOf("\n");
  return newline > cut.length / 2 ? cut.slice(0, newline) : cut;
}
