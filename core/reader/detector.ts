import type { Verdict } from "./reader.js";

// The streaming detector: fed the lines an agent draws, it decides when a limit message means the agent must be
// stopped. A candidate, then the agent quiet for quietMs → stop; the agent keeps working for dismissMs → the text
// is dismissed (and reported); the agent exits with a failing status after a candidate → stop; exits 0 → the user
// left. The clock is passed in; nothing here polls: call tick() at nextDeadline().

export type DetectorEvent =
  | { type: "candidate"; verdict: Verdict; text: string; at: number }
  | { type: "stop"; verdict: Verdict; text: string; at: number; after: "quiet" | "failing exit" }
  | { type: "dismissed"; verdict: Verdict; text: string; at: number }
  | { type: "left"; verdict: Verdict; text: string; at: number };

export interface DetectorOptions {
  quietMs: number;
  dismissMs: number;
  classify: (text: string) => Verdict;
}

interface Candidate {
  verdict: Verdict;
  text: string;
  since: number;
  lastWork: number;
}

const SPINNER = /[⠁-⣿◐◓◑◒◴◷◶◵⣾⣽⣻⢿⡿⣟⣯⣷|/\\\-–—·•●○◯◉✻✽✶✳✢✺*+⏺∙.…]/g;
const REMEMBERED = 2000;

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

  // New or changed lines the agent drew since the last call.
  observe(lines: readonly string[], at: number): DetectorEvent[] {
    if (this.finished) return [];
    const events: DetectorEvent[] = [];
    const fresh: string[] = [];
    let work = false;
    for (const raw of lines) {
      const line = raw.trimEnd();
      if (!line.trim() || this.isUsersOwn(line)) continue;
      const shape = line.replace(/\d+/g, "#").replace(SPINNER, "").replace(/\s+/g, " ").trim();
      if (shape && !this.shapes.has(shape)) {
        work = true;
        remember(this.shapes, shape);
      }
      if (!this.classified.has(line)) {
        remember(this.classified, line);
        fresh.push(line);
      }
    }
    if (this.candidate) {
      if (work && !fresh.every((line) => this.candidate!.text.includes(line.trim()))) this.candidate.lastWork = at;
      events.push(...this.tick(at));
      return events;
    }
    if (fresh.length) {
      const text = fresh.join("\n");
      const verdict = this.options.classify(text);
      if (verdict.stop) {
        this.candidate = { verdict, text: verdict.span?.text ?? text, since: at, lastWork: at };
        events.push({ type: "candidate", verdict, text: this.candidate.text, at });
      }
    }
    return events;
  }

  // Time has passed: the quiet and dismiss deadlines are checked.
  tick(at: number): DetectorEvent[] {
    const candidate = this.candidate;
    if (!candidate || this.finished) return [];
    if (at - candidate.lastWork >= this.options.quietMs) {
      this.finished = true;
      return [{ type: "stop", verdict: candidate.verdict, text: candidate.text, at, after: "quiet" }];
    }
    if (at - candidate.since >= this.options.dismissMs) {
      this.candidate = undefined;
      return [{ type: "dismissed", verdict: candidate.verdict, text: candidate.text, at }];
    }
    return [];
  }

  // The agent exited: after a candidate, a failing status is a stop and 0 is the user leaving.
  exit(code: number, at: number): DetectorEvent[] {
    const candidate = this.candidate;
    if (!candidate || this.finished) return [];
    this.finished = true;
    return code === 0
      ? [{ type: "left", verdict: candidate.verdict, text: candidate.text, at }]
      : [{ type: "stop", verdict: candidate.verdict, text: candidate.text, at, after: "failing exit" }];
  }

  // When tick() must run next, or undefined while nothing is pending (so an idle agent costs nothing).
  nextDeadline(): number | undefined {
    const candidate = this.candidate;
    if (!candidate || this.finished) return undefined;
    return Math.min(candidate.lastWork + this.options.quietMs, candidate.since + this.options.dismissMs);
  }

  // --- internal ---

  private isUsersOwn(line: string): boolean {
    const text = line.replace(/^[\s>›❯$%#│|]+/, "").trim();
    return text.length >= 4 && (this.typed.includes(text) || this.given.includes(squeeze(text)));
  }
}

// The line that tells the user limit-like text was ignored: when (local time) and what, on one line.
export function describeIgnored(event: { at: number; text: string }): string {
  return `text like a usage limit was ignored at ${new Date(event.at).toTimeString().slice(0, 5)}: ${event.text.replace(/\s+/g, " ").slice(0, 160)}`;
}

// Runs of blanks as one space: an agent may re-space a prompt's lines when it wraps them.
function squeeze(text: string): string {
  return text.replace(/\s+/g, " ");
}

function remember(set: Set<string>, value: string): void {
  set.add(value);
  if (set.size > REMEMBERED) set.delete(set.values().next().value as string);
}
