import { SPINNER_FRAME } from "./glyphs.js";
import type { Verdict } from "./reader.js";

// The streaming detector: fed the lines an agent draws, it decides when a limit message means the agent must be
// stopped. A candidate, then the agent quiet for quietMs → stop; the agent keeps working for dismissMs → the text
// is dismissed (and reported); the agent exits with a failing status after a candidate → stop; exits 0 → the user
// left. The clock is passed in; nothing here polls: call tick() at nextDeadline().
//
// Working is told from a redraw by where the screen changed: rows that came in at the bottom (new output,
// whatever its digits), a spinner glyph turning on its row, an elapsed time ticking beside "<doing>…", a row
// rewritten with words not shown before, or the provider's busy test on the visible rows before a quiet stop. The
// same row redrawn with other digits and nothing else (an idle clock, a counter) is not work.

export type DetectorEvent =
  | { type: "candidate"; verdict: Verdict; text: string; at: number }
  | { type: "stop"; verdict: Verdict; text: string; at: number; after: "quiet" | "failing exit" }
  // dismissed as the agent kept working, or, with whole, because the message read whole with the lines drawn after
  // it is no stop (whole is that reading)
  | { type: "dismissed"; verdict: Verdict; text: string; at: number; whole?: Verdict }
  | { type: "left"; verdict: Verdict; text: string; at: number }
  // a stop by its words that who spoke refuses (the agent's assistant wrote it, or drew it as its prose): no candidate
  | { type: "refused"; verdict: Verdict; text: string; at: number };

export interface DetectorOptions {
  quietMs: number;
  dismissMs: number;
  classify: (text: string) => Verdict;
  // the provider's own test that its screen shows it working, asked before a stop for quiet
  busy?: (screen: readonly string[]) => boolean;
  // who spoke the first line of a stop, weighed into its verdict (see speaker.ts): asked of stops only
  speaker?: (line: string, verdict: Verdict) => Verdict;
}

// One batch of what the agent drew, as the screen model reports it; a plain list of lines means lines fed in at
// the bottom.
export interface DrawnLines {
  lines: readonly string[];
  // rows of content that came in at the bottom since the last batch
  grew: number;
  // rows whose text changed where they stand
  redrawn: readonly { before: string; after: string; cursor: boolean }[];
}

interface Candidate {
  verdict: Verdict;
  text: string;
  since: number;
  lastWork: number;
  // the lines of the message as drawn, from where it begins, and the new lines drawn after it (at most FOLLOWERS):
  // a message written in several pieces is read whole before it stops the agent
  raw: string;
  followers: string[];
}

// glyphs a spinner or a progress bar is drawn with
const GLYPH = new RegExp(SPINNER_FRAME, "gu");
// a number as a clock or counter shows it: 12, 1.5, 12:05:09, 1,204
const NUMBER = /\d+(?:[.,:]\d+)*/g;
// "<doing>…" and an elapsed time beside it: a working indicator even when only its digits change
const DOING = /\p{L}{2,}ing(?:…|\.{3})/iu;
const ELAPSED = /\d+(?:\.\d+)?\s?(?:ms|s|m|h|secs?|mins?)\b|\b\d{1,2}:\d{2}\b/;
const REMEMBERED = 2000;
const FOLLOWERS = 12;
const BUSY_RECHECK_MS = 200;

export class Detector {
  private candidate: Candidate | undefined;
  private readonly classified = new Set<string>();
  private readonly shapes = new Set<string>();
  private typed = "";
  private given = "";
  private finished = false;

  constructor(private readonly options: DetectorOptions) {}

  // What the user typed: lines that echo it are the user's words, not the agent's.
  noteInput(text: string): void {
    this.typed = (this.typed + text).slice(-2000);
  }

  // The first prompt the agent was handed (on its command line or typed for the user): when the agent shows it as
  // the user's message, its lines are the user's words too, even the previous agent's limit screen quoted in it.
  notePrompt(text: string): void {
    this.given = squeeze(text);
  }

  // What the agent drew since the last call: its lines, and where the screen changed.
  observe(drawn: DrawnLines | readonly string[], at: number): DetectorEvent[] {
    if (this.finished) return [];
    const batch: DrawnLines = "lines" in drawn ? drawn : { lines: drawn, grew: drawn.length, redrawn: [] };
    const events: DetectorEvent[] = [];
    const fresh: string[] = [];
    const candidate = this.candidate;
    if (candidate && this.worked(batch, candidate.text)) candidate.lastWork = at;
    for (const raw of batch.lines) {
      const line = raw.trimEnd();
      if (!line.trim() || this.isUsersOwn(line)) continue;
      remember(this.shapes, shape(line));
      if (!this.classified.has(line)) {
        remember(this.classified, line);
        fresh.push(line);
      }
    }
    if (candidate) {
      for (const line of fresh) if (candidate.followers.length < FOLLOWERS) candidate.followers.push(line);
      // a quiet stop that the provider's busy test is to see the screen for waits for the host's next tick with it
      if (!this.needsScreen(at)) events.push(...this.tick(at));
      return events;
    }
    if (fresh.length) {
      const text = fresh.join("\n");
      let verdict = this.options.classify(text);
      if (verdict.stop && this.options.speaker) {
        verdict = this.options.speaker(fresh[Math.max(0, verdict.span?.line ?? 0)] ?? text, verdict);
        if (!verdict.stop) events.push({ type: "refused", verdict, text: verdict.span?.text ?? text, at });
      }
      if (verdict.stop) {
        const raw = fresh.slice(Math.max(0, verdict.span?.line ?? 0)).join("\n");
        this.candidate = { verdict, text: verdict.span?.text ?? text, since: at, lastWork: at, raw, followers: [] };
        events.push({ type: "candidate", verdict, text: this.candidate.text, at });
      }
    }
    return events;
  }

  // Time has passed: the quiet and dismiss deadlines are checked. With the visible rows (see needsScreen), the
  // provider's busy test can keep a quiet agent going.
  tick(at: number, screen?: readonly string[]): DetectorEvent[] {
    const candidate = this.candidate;
    if (!candidate || this.finished) return [];
    // the provider's busy test sees the screen before a quiet stop: without the screen, no stop yet — the caller asks
    // again with it (needsScreen says so)
    if (at - candidate.lastWork >= this.options.quietMs && (screen || !this.options.busy)) {
      // busy: asked again a quiet period later, and never more often than BUSY_RECHECK_MS
      if (screen && this.isBusy(screen)) candidate.lastWork = at + Math.max(0, BUSY_RECHECK_MS - this.options.quietMs);
      else {
        const verdict = this.whole(candidate);
        if (!verdict.stop) {
          this.candidate = undefined;
          return [{ type: "dismissed", verdict: candidate.verdict, text: candidate.text, at, whole: verdict }];
        }
        this.finished = true;
        return [{ type: "stop", verdict, text: candidate.text, at, after: "quiet" }];
      }
    }
    if (at - candidate.since >= this.options.dismissMs) {
      this.candidate = undefined;
      return [{ type: "dismissed", verdict: candidate.verdict, text: candidate.text, at }];
    }
    return [];
  }

  // After a stop that was left to the agent (it waits for its reset by itself): read on for what it draws next, so
  // that a new limit message counts again (the lines already read stay read).
  reopen(): void {
    this.finished = false;
    this.candidate = undefined;
  }

  // Whether tick(at) would stop for quiet and the provider's busy test should see the screen first.
  needsScreen(at: number): boolean {
    const candidate = this.candidate;
    return Boolean(this.options.busy && candidate && !this.finished && at - candidate.lastWork >= this.options.quietMs);
  }

  // The agent exited: after a candidate, a failing status is a stop and 0 is the user leaving.
  exit(code: number, at: number): DetectorEvent[] {
    const candidate = this.candidate;
    if (!candidate || this.finished) return [];
    this.finished = true;
    return code === 0
      ? [{ type: "left", verdict: candidate.verdict, text: candidate.text, at }]
      : [{ type: "stop", verdict: this.whole(candidate, true), text: candidate.text, at, after: "failing exit" }];
  }

  // When tick() must run next, or undefined while nothing is pending (so an idle agent costs nothing).
  nextDeadline(): number | undefined {
    const candidate = this.candidate;
    if (!candidate || this.finished) return undefined;
    return Math.min(candidate.lastWork + this.options.quietMs, candidate.since + this.options.dismissMs);
  }

  // --- internal ---

  // The candidate read again with the lines drawn after it: the reset its next line gives, or the details that make
  // it no stop after all (an API error's retry in seconds: that reading is returned). After a failing exit it stays
  // a stop, with the reset it gained.
  private whole(candidate: Candidate, exited = false): Verdict {
    if (!candidate.followers.length) return candidate.verdict;
    const verdict = this.options.classify(`${candidate.raw}\n${candidate.followers.join("\n")}`);
    if (!verdict.stop) return verdict.score < 0 && !exited ? verdict : candidate.verdict;
    return candidate.verdict.reset_at || !verdict.reset_at ? candidate.verdict : { ...candidate.verdict, reset_at: verdict.reset_at, reasons: verdict.reasons };
  }

  // Whether a batch shows the agent working, apart from its limit text and what the user typed.
  private worked(batch: DrawnLines, limitText: string): boolean {
    const counts = (line: string): boolean => {
      const text = line.trim();
      return text !== "" && !limitText.includes(text) && !text.includes(limitText) && !this.isUsersOwn(line.trimEnd());
    };
    // new output came in at the bottom: work, even lines that differ from earlier ones only in a number (but not
    // lines shown before, as when an agent reprints its history)
    if (batch.grew > 0 && batch.lines.some((line) => counts(line) && !this.classified.has(line.trimEnd()))) return true;
    return batch.redrawn.some((row) => counts(row.after) && this.isWorkingRedraw(row.before, row.after, row.cursor));
  }

  // A row rewritten where it stands is work when a spinner glyph turned, when an elapsed time ticks beside
  // "<doing>…", or when it shows words not shown before (not on the cursor's row: that is typing). Other digits
  // and nothing else is an idle clock or counter.
  private isWorkingRedraw(before: string, after: string, cursor: boolean): boolean {
    const words = shape(after);
    if (shape(before) !== words) return !cursor && !this.shapes.has(words);
    if (glyphs(before) !== glyphs(after)) return true;
    return DOING.test(after) && ELAPSED.test(after);
  }

  private isBusy(screen: readonly string[]): boolean {
    try {
      return this.options.busy!(screen);
    } catch {
      // the hook's own wrapper reports it; here a failing test only means "not known to be busy"
      return false;
    }
  }

  private isUsersOwn(line: string): boolean {
    const text = line.replace(/^[\s>›❯$%#│|]+/, "").trim();
    return text.length >= 4 && (this.typed.includes(text) || this.given.includes(squeeze(text)));
  }
}

// The line that tells the user limit-like text was ignored: when (local time) and what, on one line.
export function describeIgnored(event: { at: number; text: string }): string {
  return `text like a usage limit was ignored at ${new Date(event.at).toTimeString().slice(0, 5)}: ${event.text.replace(/\s+/g, " ").slice(0, 160)}`;
}

// A line's words: numbers as #, glyphs and blanks left out, so a redraw with other digits or another spinner
// frame has the same shape.
function shape(line: string): string {
  return line.replace(NUMBER, "#").replace(GLYPH, "").replace(/\s+/g, "");
}

// A line's glyphs in order: what a spinner turning changes.
function glyphs(line: string): string {
  return (line.replace(NUMBER, "#").match(GLYPH) ?? []).join("");
}

// Runs of blanks as one space: an agent may re-space a prompt's lines when it wraps them.
function squeeze(text: string): string {
  return text.replace(/\s+/g, " ");
}

function remember(set: Set<string>, value: string): void {
  set.add(value);
  if (set.size > REMEMBERED) set.delete(set.values().next().value as string);
}
