import { join } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { VERSION } from "../base/version.js";
import type { Context } from "../config/context.js";
import { redactorFor } from "../config/redaction.js";
import { formatInstant } from "../session/eligibility.js";
import { saveSessionFile } from "../session/journal.js";
import { readDrawnLines, readReadings, type CandidateReading, type RunReading } from "../session/readings.js";
import { sessionToReport, type Session } from "../session/sessions.js";
import { code, fenced, plain } from "./markdown.js";
import { result, type CommandResult } from "./result.js";

// The file the report is written to, in the session's folder; a new report replaces it.
export const REPORT_FILE = "report.md";

export interface ReportOptions {
  last?: string;
}

// uuldana report [SESSION] [--last N]: what the reader saw in a session — each candidate and each ignored text with
// its verdict, its reasons, what came of it and the lines drawn around it, each run's agent and version — as one
// Markdown file in the session folder, for a bug report or a manifest's limit_phrases. Prints the file's path.
export function reportCommand(context: Context, id: string | undefined, options: ReportOptions = {}): CommandResult {
  const last = options.last === undefined ? undefined : lineCount(options.last);
  const session = sessionToReport(context.dirs.data, id, context.cwd);
  const markdown = renderReport(context.dirs.data, session, { last, now: new Date() });
  const folder = join(context.dirs.data, "sessions", session.summary.id);
  // the journal's texts were redacted as they were written; secrets the config has gained since are blanked too
  const redacted = redactorFor(context.config).redactLines(markdown.split("\n")).join("\n");
  let file: string;
  try {
    file = saveSessionFile(folder, REPORT_FILE, redacted);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new UuldanaError("E_REPORT_UNWRITABLE", `cannot write the report ${join(folder, REPORT_FILE)} (${reason})`, {
      hint: reason === "EACCES" || reason === "EPERM" ? "uuldana must be able to write the session's folder: check its owner and permissions" : "check the data folder and the disk that holds it",
      cause: error,
    });
  }
  return result(`${file}\n`);
}

// The report's Markdown.
export function renderReport(dataDir: string, session: Session, options: { last: number | undefined; now: Date }): string {
  const { summary } = session;
  const runs = readReadings(session);
  const candidates = runs.flatMap((run) => run.candidates);
  const state = summary.state === "damaged" ? `damaged (${summary.reason}): what can be read of its journal is below` : summary.state + (summary.exit_code === null ? "" : ` (exit ${summary.exit_code})`);
  const out: string[] = [
    `# uuldana report: session ${code(summary.id)}`,
    "",
    `- uuldana ${plain(VERSION)}, report written ${second(options.now.toISOString())}`,
    `- session started ${summary.started ? second(summary.started) : "at a time its journal does not say"}${ranUnder(session)}; ${plain(state)}`,
    `- runs: ${runs.length ? runs.map((run) => code(run.entry)).join(" → ") : "none"}`,
    `- candidates: ${candidates.length ? tally(candidates) : "none"}`,
    ...(options.last ? [`- with the last ${options.last} line${options.last === 1 ? "" : "s"} each run drew`] : []),
    "",
    "A candidate is text uuldana's reader took for a gone usage allowance. It became a stop when the agent then went quiet or " +
      "exited with a failing status, and was dismissed when the agent kept working or when, read again with the lines the agent drew after it, it was no stop. The lines are the agent's as uuldana's " +
      "screen model read them, redacted as the session journal is (entries' env values and the config's `redact` matches " +
      "are `[redacted]`); read them before you attach this file anywhere.",
  ];
  if (candidates.length === 0) {
    out.push(
      "",
      "The reader took no text in this session for a usage limit. If an agent did say its allowance was gone, " +
        (options.last ? "its words are among the last lines below; " : "`--last N` adds the last N lines each run drew; ") +
        "a provider's manifest can name such wording in `limit_phrases`.",
    );
  }
  for (const run of runs) out.push("", ...renderRun(dataDir, summary.id, runs, run, options.last));
  return out.join("\n") + "\n";
}

// --- internal ---

function renderRun(dataDir: string, sessionId: string, runs: RunReading[], run: RunReading, last: number | undefined): string[] {
  const agent = `${plain(run.name ?? run.provider)} ${run.version === null ? "(version unknown)" : plain(run.version)}`;
  const out = [
    `## Run ${run.number}: ${code(run.entry)}`,
    "",
    `- agent: ${agent}; provider ${code(run.provider)}, entry ${code(run.entry)}, at ${code(run.level)}`,
    `- started ${second(run.started)}; ${ending(run)}`,
  ];
  if (run.candidates.length === 0) out.push("", "No text in this run looked like a usage limit to the reader.");
  for (const candidate of run.candidates) out.push("", ...renderCandidate(runs, run, candidate));
  if (last !== undefined) out.push("", ...renderTail(dataDir, sessionId, run, last));
  return out;
}

function renderCandidate(runs: RunReading[], run: RunReading, candidate: CandidateReading): string[] {
  const reset = candidate.resetAt ? formatInstant(new Date(candidate.resetAt)) : "none read";
  const verdict = [
    `stop${candidate.score === undefined ? "" : ` (score ${candidate.score})`}`,
    ...(candidate.kind ? [`kind ${code(candidate.kind)}`] : []),
    `reset ${reset}${candidate.zone ? ` (times read in ${plain(candidate.zone)})` : ""}`,
  ].join("; ");
  const out = [
    `### Candidate ${candidate.number}: ${headline(candidate)}`,
    "",
    ...(candidate.seen ? [`- seen ${second(candidate.seen)}`] : []),
    `- verdict: ${verdict}`,
  ];
  if (candidate.reasons?.length) out.push("- reasons:", ...candidate.reasons.map((reason) => `  - ${plain(reason)}`));
  out.push(`- what happened: ${happened(runs, run, candidate)}`, "", "The text it read:", "", fenced(candidate.text.split("\n")));
  const before = candidate.before ?? [];
  const own = candidate.lines ?? [];
  const after = candidate.after ?? [];
  if (!candidate.before && !candidate.after) {
    out.push("", "The journal kept no lines drawn around it (it was written before uuldana kept them).");
    return out;
  }
  const parts = [
    `${before.length} before it`,
    own.length === 1 ? "its own line" : own.length ? `its own ${own.length} lines` : "its own lines not found among them",
    `${after.length} after it${until(candidate)}`,
  ];
  out.push("", `The lines the agent drew around it: ${parts.join(", ")}.`);
  if (before.length + own.length + after.length) out.push("", fenced([...before, ...own, ...after]));
  return out;
}

function renderTail(dataDir: string, sessionId: string, run: RunReading, last: number): string[] {
  const lines = readDrawnLines(dataDir, sessionId, run);
  if (lines === undefined) return ["uuldana kept no drawn lines for this run."];
  if (lines.length === 0) return ["The agent drew no lines in this run."];
  const shown = lines.slice(-last);
  const of = shown.length < lines.length ? ` (of the ${lines.length} uuldana kept)` : "";
  return [`The last ${count(shown.length)} the agent drew${of}:`, "", fenced(shown)];
}

function headline(candidate: CandidateReading): string {
  switch (candidate.outcome?.type) {
    case "stopped":
      return "a stop";
    case "dismissed":
      return "dismissed";
    case "left":
      return "the agent exited 0 (you left)";
    default:
      return "no outcome recorded";
  }
}

function happened(runs: RunReading[], run: RunReading, candidate: CandidateReading): string {
  const outcome = candidate.outcome;
  const entry = code(run.entry);
  switch (outcome?.type) {
    case "stopped": {
      const why =
        outcome.after === "failing exit"
          ? "the agent exited with a failing status after it"
          : `the agent was quiet${candidate.quietSeconds === undefined ? "" : ` for ${candidate.quietSeconds} s (\`quiet_seconds\`)`} after it`;
      const rest = `uuldana rested ${entry}${outcome.restsUntil ? ` until ${formatInstant(new Date(outcome.restsUntil))}` : ""}`;
      const exited = outcome.after === "failing exit";
      const next = runs[run.number];
      const onTo = next ? `${code(next.entry)} (run ${next.number})` : "the next entry";
      const then = outcome.movedOn
        ? exited
          ? `and went on with ${onTo}`
          : `, stopped it and went on with ${onTo}`
        : exited
          ? "and no other entry took over"
          : "and left it running (failover was off, or no other entry could take over)";
      return `${why}, so at ${second(outcome.at)} ${rest}${then.startsWith(",") ? "" : " "}${then}`;
    }
    case "dismissed":
      if (outcome.whoSpoke) return `its words read as a stop, but ${(outcome.whoSpoke.at(-1) ?? "no reason kept").replace(/^not a stop: /, "")}, so at ${second(outcome.at)} uuldana took it for no stop and left the agent running`;
      if (outcome.readWhole) return `read again with the lines the agent drew after it, it was no stop (${outcome.readWhole.at(-1) ?? "no reason kept"}), so at ${second(outcome.at)} uuldana dismissed it and left the agent running (the ⚠ mark)`;
      return `the agent kept working${candidate.dismissSeconds === undefined ? "" : ` for ${candidate.dismissSeconds} s (\`dismiss_seconds\`)`} after it, so at ${second(outcome.at)} uuldana dismissed it and left the agent running (the ⚠ mark)`;
    case "left":
      return `the agent exited with status 0 after it, at ${second(outcome.at)}: you leaving, not a stop`;
    default:
      return "none yet: the session was still running when this report was written, or its uuldana ended first";
  }
}

function until(candidate: CandidateReading): string {
  switch (candidate.outcome?.type) {
    case "stopped":
      return " until it was stopped";
    case "dismissed":
      return " until it was dismissed";
    case "left":
      return " until the agent exited";
    default:
      return "";
  }
}

function ending(run: RunReading): string {
  if (run.startFailed !== undefined) return `could not start: ${plain(run.startFailed)}`;
  const end = run.end;
  if (!end) return "no end recorded";
  const status = end.signal ? `killed by signal ${end.signal}` : end.exitCode === null ? "no exit code" : `exit ${end.exitCode}`;
  if (!end.stoppedBy) return `ended, ${status}`;
  return `stopped with ${end.stoppedBy === "keys" ? "its exit keys" : plain(end.stoppedBy)}, ${status}`;
}

// the uuldana the session began under, when its journal says
function ranUnder(session: Session): string {
  const version = session.events.find((event) => event.type === "session-start")?.uuldana;
  return typeof version === "string" ? ` under uuldana ${plain(version)}` : "";
}

function tally(candidates: CandidateReading[]): string {
  const by = (type: string | undefined): number => candidates.filter((candidate) => candidate.outcome?.type === type).length;
  const parts = [
    [by("stopped"), "stop", "stops"],
    [by("dismissed"), "dismissed", "dismissed"],
    [by("left"), "left", "left"],
    [by(undefined), "without an outcome", "without an outcome"],
  ] as const;
  const said = parts.filter(([n]) => n > 0).map(([n, one, many]) => (n === 1 ? `1 ${one}` : `${n} ${many}`));
  return `${candidates.length} (${said.join(", ")})`;
}

function count(n: number): string {
  return n === 1 ? "1 line" : `${n} lines`;
}

// "2026-12-01 14:05:09 UTC": the instant of an event, to the second
function second(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? plain(iso) : `${date.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

// --last N: a whole number of lines, at least 1
function lineCount(value: string): number {
  if (!/^[1-9]\d*$/.test(value.trim())) {
    throw new UuldanaError("E_USAGE", `--last ${value}: not a number of lines`, { hint: "give a whole number of lines above 0, for example --last 50" });
  }
  return Math.min(Number(value), Number.MAX_SAFE_INTEGER);
}
