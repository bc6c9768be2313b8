import { jsonText } from "../base/json.js";
import { escapeControls } from "../base/safe-text.js";
import type { RunResult } from "../host/host.js";
import type { Transcript, TranscriptQuery, Turn } from "../registry/adapter.js";
import type { ProviderHooks } from "../registry/provider.js";
import type { RunPart } from "./handoff.js";
import type { Journal } from "./journal.js";
import type { Launch } from "./run-launch.js";
import type { RunReport } from "./result.js";

// What a run leaves once its agent has ended: its part of the conversation (from the agent's transcript where its
// adapter reads one, else its screen), the report's last facts, and how it ended.

// A start that fails this soon with a failing status counts as "could not start": the next entry is tried.
const FAILED_START_MS = 3000;

export interface FinishFacts {
  launch: Launch;
  hooks: ProviderHooks;
  journal: Journal;
  runIndex: number;
  cwd: string;
  startedAt: Date;
  // the session was told to stop
  aborted: boolean;
  // why the run's receiver did not take the conversation, when it did not
  receiverFailure: string | undefined;
  took: boolean | undefined;
  redact: (text: string) => string;
}

// The run's part of the conversation and its report, both complete; the conversation and run-end are journaled.
export function finishRun(ended: RunResult, facts: FinishFacts): { report: RunReport; part: RunPart } {
  const { launch, hooks, journal, runIndex } = facts;
  const report = launch.report;
  const entry = report.entry;
  // the adapter's reading of the turns on the screen, where the general reading of its screen is wrong for it
  const turns = hooks.conversation(ended.conversation);
  const conversation = turns ? turns.map(formatTurn).join("\n") : ended.conversation;
  const conversationFile = `conversation-${runIndex}.txt`;
  journal.save(conversationFile, conversation + "\n");
  // the run's own transcript, where the agent keeps one and its adapter reads it
  const read = readTranscript(hooks, { cwd: facts.cwd, env: launch.env, started: facts.startedAt, ended: new Date(), sessionId: launch.sessionId, prompt: launch.prompt });
  const turnsFile = `turns-${runIndex}.json`;
  if (read.transcript) journal.save(turnsFile, jsonText(read.transcript.turns) + "\n");
  journal.write("conversation", {
    entry,
    name: launch.manifest.name,
    file: conversationFile,
    source: read.transcript ? "transcript" : "screen",
    ...(read.transcript ? { transcript: read.transcript.file, turns_file: turnsFile, turns: read.transcript.turns.length } : {}),
    ...(read.tried ? { read_ms: read.ms } : {}),
    ...(read.tried && !read.transcript ? { fallback: "its transcript could not be found or read" } : {}),
  });
  const held = heldKeys(ended, report, facts);
  journal.write("run-end", { entry, exit_code: ended.exitCode, signal: ended.signal ?? null, stopped_by: ended.stop?.step ?? null, user_turns: ended.userTurns.length });
  endReport(report, ended, facts);
  report.conversationFrom = read.transcript ? "transcript" : read.tried ? "screen, its transcript unread" : "screen";
  return {
    report,
    part: {
      entry,
      name: launch.manifest.name,
      conversation,
      transcript: read.transcript,
      stopText: report.limit?.text,
      prompt: launch.prompt,
      typed: [...ended.userTurns, ...held],
      chrome: turns ? undefined : hooks.chrome,
      rotated: report.limit?.reason === "rotate" ? report.limit.text : undefined,
      handedBack: report.limit?.reason === "home" ? whatItDid(read.transcript, ended.userTurns) : undefined,
    },
  };
}

// --- internal ---

// Keys the user typed while uuldana stopped the agent, which never reached it: whole lines go on to the agent that
// takes over, as the user's latest words; anything else is journaled as not delivered, with the reason. Lines typed
// to an agent that never took the conversation (it may have been asking for a key) go to no other agent.
function heldKeys(ended: RunResult, report: RunReport, facts: FinishFacts): string[] {
  const entry = report.entry;
  const onward = report.limit?.action === "failover" && !facts.aborted;
  const why = facts.aborted
    ? `typed while ${entry} was being stopped: uuldana was told to stop`
    : facts.receiverFailure
      ? `typed while ${entry} was being stopped: it had not taken the conversation`
      : `typed while ${entry} was being stopped, and no other agent took over`;
  for (const text of ended.heldTurns) facts.journal.write(onward ? "user" : "keys-not-delivered", { entry, text, ...(onward ? { held: true } : { reason: why }) });
  if (ended.heldPartial) facts.journal.write("keys-not-delivered", { entry, text: ended.heldPartial, reason: `typed without Enter while ${entry} was being stopped` });
  return onward ? ended.heldTurns : [];
}

// How the run ended, as the report says it: stopped, killed or exited; a start that failed; the action of a limit
// that a signal to uuldana overrode.
function endReport(report: RunReport, ended: RunResult, facts: FinishFacts): void {
  // a signal to uuldana means the user wants to stop, even if a limit came first
  if (report.limit && facts.aborted) report.limit.action = "stopped";
  const stoppedBy = ended.stop && ended.stop.step !== "exited" ? ended.stop.step : null;
  Object.assign(report, {
    end: stoppedBy ? "stopped" : ended.signal ? "killed" : "exited",
    exitCode: ended.exitCode,
    signal: ended.signal ?? null,
    stoppedBy,
    durationMs: ended.durationMs,
    userTurns: ended.userTurns.length,
  } satisfies Partial<RunReport>);
  report.took = facts.took;
  if (facts.receiverFailure && !report.limit && !facts.aborted) {
    report.end = "failed-start";
    report.failure = facts.receiverFailure;
  } else if (!report.limit && !facts.aborted && ended.exitCode !== 0 && ended.durationMs < FAILED_START_MS && !ended.typed) {
    report.end = "failed-start";
    report.failure = `it exited with status ${ended.exitCode} at once`;
  }
  // an account with no allowance at all, shown before the user's first turn: the entry could not start work (it
  // rests all the same, so the session does not try it again and again)
  if (report.limit?.kind === "account" && report.limit.action === "failover" && ended.userTurns.length === 0 && !ended.typed) {
    report.end = "failed-start";
    report.failure = `its account has no allowance: ${escapeControls(facts.redact(report.limit.text)).replace(/\s+/g, " ").slice(0, 160)}`;
  }
}

// What a fallback agent did since it took over, for the entry it hands the work back to: the requests it took, and
// the files its transcript says its tools changed (tools whose names say they edit, write, patch, create, move or
// delete); from a screen alone, the requests only.
function whatItDid(transcript: Transcript | undefined, typed: readonly string[]): string {
  const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? "" : "s"}`;
  if (!transcript) return `since then it took ${plural(typed.length, "request")} from the user; what it changed is not known (its part below is from its screen)`;
  const requests = transcript.turns.filter((turn) => turn.role === "user").length;
  const files = [...new Set(transcript.turns.filter((turn) => turn.role === "tool").map((turn) => CHANGED.exec(turn.text)?.[1]?.trim()).filter((file): file is string => !!file))];
  const changed = files.length ? `its tools changed ${files.slice(0, 20).join(", ")}${files.length > 20 ? ` and ${files.length - 20} more` : ""}` : "its tools changed no file";
  return `since then it took ${plural(requests, "request")} from the user and ${changed}`;
}

// A tool call that changes a file, as the transcript hooks summarise it ("Edit: src/lexer.ts"): its target.
const CHANGED = /^[\w.-]*(?:edit|write|patch|replace|create|delete|remove|move|rename)[\w.-]*: (.{1,200})$/i;

// One turn as the next agent reads it: the user's words marked as the user's.
function formatTurn(turn: Turn): string {
  return turn.role === "user" ? `> ${turn.text}` : turn.text;
}

// The run's transcript from its adapter, and how long the reading took; tried is false when the adapter reads none.
function readTranscript(hooks: ProviderHooks, query: TranscriptQuery): { transcript: Transcript | undefined; tried: boolean; ms: number } {
  if (!hooks.hasTranscript) return { transcript: undefined, tried: false, ms: 0 };
  const started = performance.now();
  const transcript = hooks.transcript(query);
  return { transcript, tried: true, ms: Math.round((performance.now() - started) * 10) / 10 };
}
