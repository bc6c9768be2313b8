import type { Level } from "../config/levels.js";
import type { PaidUsage } from "../config/config.js";
import type { StopStep } from "../host/stop.js";
import type { LimitKind } from "../reader/reader.js";

// What a session did, as flat facts: the engine returns it, the commands render it, and nobody reads its text back.
export interface SessionResult {
  sessionId: string;
  runs: RunReport[];
  ending: SessionEnding;
  exitCode: number;
  // the signal to uuldana that ended the session (ending "signal")
  signal: NodeJS.Signals | undefined;
  // why no entry could run (ending "no-entry"): each entry of the list with its reasons, and when the first resting
  // one returns
  nothingCanRun: NothingCanRun | undefined;
  // the session would have waited, but the first entry returns later than wait_max_hours
  waitedTooLong?: boolean;
}

// How a session ended: its agent exited (or was stopped and no failover followed), no entry could run, or a signal
// to uuldana ended it.
export type SessionEnding = "agent-exited" | "no-entry" | "signal";

export interface NothingCanRun {
  ceiling: Level;
  entries: { entry: string; reasons: string[] }[];
  firstReturn: Date | undefined;
}

// One run of one entry.
export interface RunReport {
  entry: string;
  provider: string;
  name: string;
  version: string | null;
  level: Level;
  // the ceiling above that level when the user typed it (--ceiling) or a project's config set it, for the banner
  ceilingOrigin?: { level: Level; from: "command line" | "project" };
  // how it started: the session's first, after another entry's limit, or continuing a session
  start: RunStart;
  // it was handed the conversation so far as its first prompt
  prompted: boolean;
  // the arguments that made the agent continue its own conversation, when resuming the entry that ran last
  nativeResume: string[] | undefined;
  // when this entry's rest ended, if it rested before and runs again now
  restedUntil: Date | undefined;
  // how it ended: the agent exited by itself, uuldana stopped it, a signal killed it, or it could not start
  end: RunEnd;
  exitCode: number | null;
  signal: number | null;
  stoppedBy: StopStep | null;
  // why it could not start (end "failed-start")
  failure: string | undefined;
  // for a run handed the conversation: whether it showed that it took it (undefined: nothing was handed to it)
  took: boolean | undefined;
  // it was left at a sign-in screen: why, and what signs it in (the session does not try it again)
  signIn?: string | undefined;
  limit: LimitEvent | undefined;
  // limit-like text the agent went on working past: when, and what
  ignored: { at: number; text: string }[];
  // the provider's hooks that were turned off during the run (they threw, answered wrongly, or were too slow), one
  // line each as the user is told
  hookProblems: string[];
  // the models it switched between in place at a per-model limit, in order, and until when the one it left rests
  switches: { from: string; to: string; restsUntil: Date }[];
  durationMs: number;
  userTurns: number;
  // where the run's part of the conversation came from: its transcript, or its screen (and whether a transcript
  // was looked for and not found)
  conversationFrom: "transcript" | "screen" | "screen, its transcript unread";
}

export type RunStart = "first" | "failover" | "resume";
export type RunEnd = "exited" | "stopped" | "killed" | "failed-start";

// The agent said its allowance is gone, and what the session did about it.
export interface LimitEvent {
  // read from printed text, or from the agent's own quota numbers (its status line, rollout or transcript)
  source: "inferred" | "native";
  // the allowance is gone, or a window was nearly spent and the session moves on before the wall (rotate_at_percent_left),
  // or another uuldana session rested this entry (its account met the limit there), or an entry higher in the list
  // has rested and the session goes back to it (return_home; then nothing ran out and nothing rests)
  reason: "limit" | "rotate" | "shared-rest" | "home";
  kind: LimitKind;
  resetAt: string | null;
  // the printed message, or the agent's own words or numbers when nothing was printed
  text: string;
  // what made it a stop: the agent went quiet after the text, exited with a failing status, said so itself, or
  // switched itself to another model
  after: "quiet" | "failing exit" | "native" | "turn boundary" | "its own switch";
  // for a rotation: the window that was nearly spent and the share of it left
  window?: { name: string; percentLeft: number; threshold: number } | undefined;
  restsUntil: Date;
  // whether the cooldown table holds the rest (a busy table is written later)
  rested: boolean;
  // the session moved on to the next entry, or kept this one running (failover off, no other entry, stopped by a
  // signal), or left the agent to wait for its reset (or switch its model) by itself (native_wait "allow")
  action: "failover" | "kept running" | "stopped" | "left to the agent";
  // for reason "home": the entry the session goes back to, and when its rest ended
  home?: { entry: string; until: string } | undefined;
  // what the agent itself offered at this limit (its screen showed it waiting for its reset, or switched to another
  // model) and what uuldana chose (the entry's or its manifest's native_wait)
  offer?: { kind: "wait" | "switch"; choice: "failover" | "allow" } | undefined;
  // the agent offered paid usage at this limit (its words), the user's paid_usage, whether the agent was left to
  // take it (then nothing rests), and the user's answer when asked
  paid?: { offer: string; policy: PaidUsage; taken: boolean; answer?: "go on" | "move on" | "no answer" | "unattended" } | undefined;
  // why the agent was left running, when it was
  why: string | undefined;
  cooldownNotice: string | undefined;
}

// A limit's name as uuldana says it: "weekly limit", "account allowance", "usage allowance" when its kind is unknown.
export function limitName(limit: LimitEvent): string {
  return limit.kind === "unknown" ? "usage allowance" : limit.kind === "account" ? "account allowance" : `${limit.kind} limit`;
}

// What the engine tells its renderer as the session goes: before each run, a start that failed, notes.
export type SessionEvent =
  | { type: "notes"; notes: string[] }
  | { type: "run-starting"; run: RunReport; previous: RunReport | undefined; commandKey: string }
  | { type: "start-failed"; run: RunReport }
  | { type: "run-ended"; run: RunReport }
  // every entry rests: the session waits for the first to return (first: the wait begins; later: it woke to look again)
  | { type: "waiting"; nothingCanRun: NothingCanRun; entry: string; until: Date; first: boolean }
  | { type: "wait-over"; entry: string };
