import type { DrawnAround } from "../host/drawn-lines.js";
import type { DetectorEvent } from "../reader/detector.js";
import type { Journal } from "./journal.js";

// The journal lines of what the detector saw in a run, for `uuldana report`: each candidate as it is seen, with its
// verdict, the settings it was judged under and the lines around it; each outcome (ignored, left) with the lines
// drawn after it. A stop's line is the limit line, written where the limit is settled.

export interface DetectionFacts {
  entry: string;
  // the candidate's number in the run, from 1: each outcome names the one it ends
  candidate: number;
  settings: { quietSeconds: number; dismissSeconds: number };
  redact: (text: string) => string;
}

export function journalDetection(journal: Journal, facts: DetectionFacts, event: Exclude<DetectorEvent, { type: "stop" }>, drawn: DrawnAround): void {
  const { entry, candidate } = facts;
  if (event.type === "candidate" || event.type === "refused") {
    const { stop, score, kind, reset_at, reasons } = event.verdict;
    // the zone a time printed without one was read in: the agent's (its time_zone), else the user's
    const zone = event.verdict.facts?.time_zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
    const { quietSeconds, dismissSeconds } = facts.settings;
    const used = event.verdict.facts ? { facts: event.verdict.facts } : {};
    journal.write("candidate", { entry, candidate, text: event.text, stop, score, kind, reset_at, reasons, ...used, quiet_seconds: quietSeconds, dismiss_seconds: dismissSeconds, zone, lines_before: drawn.before, lines: drawn.lines });
    // refused for who spoke: its outcome at once, with the reason
    if (event.type === "refused") journal.write("ignored", { entry, text: event.text, score, why: "who spoke", reasons: reasons.map((reason) => facts.redact(reason)), candidate, lines_after: [] });
    return;
  }
  const outcome = { candidate, lines_after: drawn.after };
  if (event.type === "left") {
    journal.write("left", { entry, text: event.text, score: event.verdict.score, ...outcome });
    return;
  }
  // why: the agent kept working, or the message read whole (with the lines drawn after it) is no stop
  const why = event.whole ? { why: "read whole", reasons: event.whole.reasons.map((reason) => facts.redact(reason)) } : { why: "working" };
  journal.write("ignored", { entry, text: event.text, score: event.verdict.score, ...why, ...outcome });
}
