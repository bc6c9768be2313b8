import { basename, join } from "node:path";

import { readRegularFileSync } from "../base/files.js";
import type { JournalEvent } from "./journal.js";
import type { Session } from "./sessions.js";

// What the reader saw in a session, run by run, as its journal and the files beside it keep it: each candidate (text
// the reader took for a gone allowance) with its verdict, the lines drawn around it and what came of it, and where
// each run's last drawn lines are. Also journals written before candidates were kept: their limits and ignored texts.

export interface RunReading {
  // 1, 2, …: the run's place in the session
  number: number;
  entry: string;
  provider: string;
  // the agent's name and version as its manifest and probe gave them
  name: string | undefined;
  version: string | null;
  level: string;
  started: string;
  end: RunEnding | undefined;
  startFailed: string | undefined;
  candidates: CandidateReading[];
  // the file of its last drawn lines, in the session folder, when one was kept
  drawnFile: string | undefined;
}

export interface RunEnding {
  exitCode: number | null;
  signal: number | null;
  stoppedBy: string | null;
}

export interface CandidateReading {
  number: number;
  // when it was seen; undefined for a journal that kept only its outcome
  seen: string | undefined;
  text: string;
  score: number | undefined;
  kind: string | undefined;
  resetAt: string | null;
  reasons: string[] | undefined;
  quietSeconds: number | undefined;
  dismissSeconds: number | undefined;
  zone: string | undefined;
  // the lines drawn before it, its own, after it; undefined where the journal kept none
  before: string[] | undefined;
  lines: string[] | undefined;
  after: string[] | undefined;
  outcome: CandidateOutcome | undefined;
}

export type CandidateOutcome =
  | { type: "stopped"; at: string; after: string | undefined; restsUntil: string | undefined; movedOn: boolean }
  | { type: "dismissed"; at: string; readWhole: string[] | undefined; whoSpoke?: string[] }
  | { type: "left"; at: string };

// The runs of a session with what the reader saw in each, in order.
export function readReadings(session: Session): RunReading[] {
  const runs: RunReading[] = [];
  let run: RunReading | undefined;
  // the candidate an outcome ends: the run's last one without an outcome
  const pending = (): CandidateReading | undefined => run?.candidates.findLast((candidate) => !candidate.outcome);
  const outcomeOf = (event: JournalEvent, seen: "stopped" | "dismissed" | "left"): CandidateReading | undefined => {
    if (!run) return undefined;
    const open = pending();
    const numbered = typeof event.candidate === "number" ? run.candidates.find((candidate) => candidate.number === event.candidate && !candidate.outcome) : open;
    // a journal from before candidates were kept has only the outcome: it stands for its candidate
    const candidate = numbered ?? addCandidate(run, event, undefined);
    if (Array.isArray(event.lines_after)) candidate.after = strings(event.lines_after);
    candidate.kind ??= text(event.kind);
    if (candidate.score === undefined && typeof event.score === "number") candidate.score = event.score;
    if (seen === "stopped") {
      candidate.resetAt ??= typeof event.reset_at === "string" ? event.reset_at : null;
      candidate.outcome = { type: "stopped", at: event.at, after: text(event.after), restsUntil: undefined, movedOn: false };
    } else if (seen === "dismissed") {
      const reasons = Array.isArray(event.reasons) ? strings(event.reasons) : undefined;
      candidate.outcome = { type: seen, at: event.at, readWhole: event.why === "read whole" ? reasons : undefined, ...(event.why === "who spoke" && reasons ? { whoSpoke: reasons } : {}) };
    }
    else candidate.outcome = { type: seen, at: event.at };
    return candidate;
  };
  let stopped: CandidateReading | undefined;
  for (const event of session.events) {
    switch (event.type) {
      case "run-start":
        run = {
          number: runs.length + 1,
          entry: String(event.entry),
          provider: String(event.provider ?? event.entry),
          name: text(event.name),
          version: typeof event.version === "string" ? event.version : null,
          level: String(event.level ?? ""),
          started: event.at,
          end: undefined,
          startFailed: undefined,
          candidates: [],
          drawnFile: typeof event.drawn_file === "string" ? basename(event.drawn_file) : undefined,
        };
        runs.push(run);
        stopped = undefined;
        break;
      case "candidate":
        if (run) addCandidate(run, event, event.at);
        break;
      case "ignored":
        outcomeOf(event, "dismissed");
        break;
      case "left":
        outcomeOf(event, "left");
        break;
      case "limit":
        stopped = outcomeOf(event, "stopped");
        break;
      case "cooldown":
        if (stopped?.outcome?.type === "stopped" && event.entry === run?.entry) stopped.outcome.restsUntil = text(event.until);
        break;
      case "handoff-from":
        if (stopped?.outcome?.type === "stopped") stopped.outcome.movedOn = true;
        break;
      case "conversation":
        if (run && run.name === undefined) run.name = text(event.name);
        break;
      case "start-failed":
        if (run) run.startFailed = String(event.reason ?? "");
        break;
      case "run-end":
        if (run) run.end = { exitCode: numberOrNull(event.exit_code), signal: numberOrNull(event.signal), stoppedBy: text(event.stopped_by) ?? null };
        break;
    }
  }
  return runs;
}

// The last lines a run drew, as the session kept them; undefined when it kept none (or they cannot be read).
export function readDrawnLines(dataDir: string, sessionId: string, run: RunReading): string[] | undefined {
  if (!run.drawnFile) return undefined;
  let content: string;
  try {
    // a pipe or a folder in its place is no saved file: it is never waited on
    content = readRegularFileSync(join(dataDir, "sessions", sessionId, run.drawnFile));
  } catch {
    return undefined;
  }
  return content === "" ? [] : content.replace(/\n$/, "").split("\n");
}

// --- internal ---

function addCandidate(run: RunReading, event: JournalEvent, seen: string | undefined): CandidateReading {
  const candidate: CandidateReading = {
    number: typeof event.candidate === "number" ? event.candidate : run.candidates.length + 1,
    seen,
    text: String(event.text ?? ""),
    score: typeof event.score === "number" ? event.score : undefined,
    kind: seen ? text(event.kind) : undefined,
    resetAt: seen ? (typeof event.reset_at === "string" ? event.reset_at : null) : null,
    reasons: Array.isArray(event.reasons) ? strings(event.reasons) : undefined,
    quietSeconds: typeof event.quiet_seconds === "number" ? event.quiet_seconds : undefined,
    dismissSeconds: typeof event.dismiss_seconds === "number" ? event.dismiss_seconds : undefined,
    zone: text(event.zone),
    before: Array.isArray(event.lines_before) ? strings(event.lines_before) : undefined,
    lines: Array.isArray(event.lines) ? strings(event.lines) : undefined,
    after: undefined,
    outcome: undefined,
  };
  run.candidates.push(candidate);
  return candidate;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function numberOrNull(value: unknown): number | null {
  return typeof value === "number" ? value : null;
}

function strings(values: unknown[]): string[] {
  return values.map((value) => String(value));
}
