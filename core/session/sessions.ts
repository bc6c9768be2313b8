import { readdirSync } from "node:fs";
import { basename, join } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { readRegularFileSync } from "../base/files.js";
import { processRuns, processStarted } from "../base/process.js";
import { copyTurns, isTurnList, type Turn } from "../registry/adapter.js";
import type { RunPart } from "./handoff.js";
import { checkSessionsFolder, inspectJournal, readJournal, type JournalEvent } from "./journal.js";

// Sessions as their folders keep them: each one's state (running, ended, interrupted, orphaned, damaged), which one
// can be continued, and what a resumed session carries over.

export type SessionState = "running" | "ended" | "interrupted" | "orphaned" | "damaged";

export interface SessionSummary {
  id: string;
  // null only for a damaged journal that does not say
  started: string | null;
  cwd: string;
  runs: string[];
  state: SessionState;
  exit_code: number | null;
  // what is wrong with a damaged journal
  reason?: string;
  // the agent an orphaned session left running
  agent_pid?: number;
}

// A session as read from its folder: its summary, its events, and for one without an end the processes of its
// latest sitting that still run (its uuldana, or the agent of a run that has no end).
export interface Session {
  summary: SessionSummary;
  events: JournalEvent[];
  uuldana: number | undefined;
  agent: { pid: number; entry: string } | undefined;
}

// The session uuldana resume continues: the one named, else the newest that can be continued begun in this folder,
// else the newest of all. One still running in another uuldana, one whose agent still runs without it, and one whose
// journal cannot be read are refused, saying what to do: two uuldanas never write one journal.
export function sessionToResume(dataDir: string, id: string | undefined, cwd: string): { id: string; cwd: string } {
  const sessions = readSessions(dataDir);
  if (id) {
    const named = /^[0-9a-z]+$/.test(id) ? sessions.find((session) => session.summary.id === id) : undefined;
    if (!named) throw new UuldanaError("E_USAGE", `no session "${id}"`, { hint: 'run "uuldana sessions" to see the sessions' });
    const why = whyNotResumable(named);
    if (why) throw new UuldanaError("E_SESSION_NOT_RESUMABLE", why.message, { hint: why.hint });
    return named.summary;
  }
  const resumable = sessions.filter((session) => !whyNotResumable(session));
  const chosen = resumable.find((session) => session.summary.cwd === cwd) ?? resumable[0];
  if (!chosen) throw new UuldanaError("E_NOTHING_TO_RESUME", "no session to resume", { hint: 'run "uuldana sessions" to see the sessions' });
  return chosen.summary;
}

// The session uuldana report describes: the one named (in any state: a damaged journal's readable part too), else the
// newest begun in this folder, else the newest of all.
export function sessionToReport(dataDir: string, id: string | undefined, cwd: string): Session {
  if (id) return findSession(dataDir, id);
  const sessions = readSessions(dataDir);
  const chosen = sessions.find((session) => session.summary.cwd === cwd) ?? sessions[0];
  if (!chosen) throw new UuldanaError("E_NO_SESSION", "there is no session to report on yet", { hint: 'a session begins with "uuldana run"; "uuldana sessions" lists them' });
  return chosen;
}

// What a resumed session carries over from its journal: each run's conversation (without the message that stopped
// it), whether anyone had spoken, and the entry that ran last.
export interface ResumeFacts {
  sessionId: string;
  parts: RunPart[];
  spoken: boolean;
  lastEntry: string | undefined;
  // its uuldana was waiting for a resting entry to return when it ended
  waiting?: boolean;
}

export function readResumeFacts(dataDir: string, id: string): ResumeFacts {
  const folder = join(dataDir, "sessions", id);
  const events = readJournal(join(folder, "journal.jsonl"));
  const parts: RunPart[] = [];
  let stopText: Record<string, string> = {};
  // the handoff prompt of the run being read, saved beside the journal, and the lines the user typed in it
  let prompt: string | undefined;
  let typed: string[] = [];
  for (const event of events) {
    if (event.type === "limit") stopText = { ...stopText, [String(event.entry)]: String(event.text) };
    if (event.type === "run-start") {
      prompt = typeof event.prompt_file === "string" ? readSaved(folder, event.prompt_file) : undefined;
      typed = [];
    }
    if (event.type === "user") typed.push(String(event.text));
    if (event.type !== "conversation") continue;
    const entry = String(event.entry);
    const conversation = readSaved(folder, String(event.file));
    if (conversation === undefined) continue;
    const turns = typeof event.turns_file === "string" ? savedTurns(readSaved(folder, event.turns_file)) : undefined;
    parts.push({
      entry,
      name: typeof event.name === "string" ? event.name : entry,
      conversation,
      ...(turns && typeof event.transcript === "string" ? { transcript: { file: event.transcript, turns } } : {}),
      ...(stopText[entry] ? { stopText: stopText[entry] } : {}),
      ...(prompt ? { prompt } : {}),
      typed,
    });
  }
  const spoken = events.some((event) => event.type === "user");
  const lastEntry = events.filter((event) => event.type === "run-start").map((event) => String(event.entry)).at(-1);
  const waiting = events.filter((event) => event.type === "wait" || event.type === "wait-end" || event.type === "run-start").at(-1)?.type === "wait";
  return { sessionId: id, parts, spoken, lastEntry, ...(waiting ? { waiting } : {}) };
}

export function findSession(dataDir: string, id: string): Session {
  const session = /^[0-9a-z]+$/.test(id) ? readSessions(dataDir).find((s) => s.summary.id === id) : undefined;
  if (!session) throw new UuldanaError("E_USAGE", `no session "${id}"`, { hint: 'run "uuldana sessions" to see the sessions' });
  return session;
}

export function readSessions(dataDir: string): Session[] {
  const folder = join(dataDir, "sessions");
  return sessionFolders(dataDir)
    .map((id) => readSession(id, join(folder, id)))
    .sort((a, b) => (b.summary.started ?? "").localeCompare(a.summary.started ?? "") || b.summary.id.localeCompare(a.summary.id));
}

// The ids of the sessions, newest first (an id begins with its creation time), without reading a journal: what a
// Tab press offers.
export function sessionIds(dataDir: string): string[] {
  return sessionFolders(dataDir).sort().reverse();
}

// a session is a folder named by its id; anything else there is not one
function sessionFolders(dataDir: string): string[] {
  if (!checkSessionsFolder(dataDir)) return [];
  return readdirSync(join(dataDir, "sessions"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && /^[0-9a-z]+$/.test(entry.name))
    .map((entry) => entry.name);
}

function readSession(id: string, folder: string): Session {
  const { events, damage } = inspectJournal(join(folder, "journal.jsonl"));
  // the latest sitting: the session's start, or its latest resume
  const sitting = events.slice(Math.max(0, events.findLastIndex((event) => event.type === "session-start" || event.type === "session-resume")));
  const start = events.find((event) => event.type === "session-start");
  const end = sitting.find((event) => event.type === "session-end");
  const open = !damage && !end;
  const uuldana = open ? verifiedPid(sitting[0]) : undefined;
  const lastRun = sitting.findLastIndex((event) => event.type === "run-start");
  const runOpen = open && uuldana === undefined && lastRun !== -1 && !sitting.slice(lastRun).some((event) => event.type === "run-end");
  const agentPid = runOpen ? verifiedPid(sitting[lastRun]) : undefined;
  const agent = agentPid === undefined ? undefined : { pid: agentPid, entry: String(sitting[lastRun]!.entry) };
  const state: SessionState = damage ? "damaged" : end ? "ended" : uuldana !== undefined ? "running" : agent ? "orphaned" : "interrupted";
  const summary: SessionSummary = {
    id,
    started: start?.at ?? events[0]?.at ?? null,
    cwd: typeof start?.cwd === "string" ? start.cwd : "",
    runs: events.filter((event) => event.type === "run-start").map((event) => String(event.entry)),
    state,
    exit_code: typeof end?.exit_code === "number" ? end.exit_code : null,
    ...(damage ? { reason: damage } : {}),
    ...(agent ? { agent_pid: agent.pid } : {}),
  };
  return { summary, events, uuldana, agent };
}

// The pid an event records, if that process still runs and is the one recorded: when the event says when it began,
// that must match (a pid the system gave again to another process does not count). Without that time (a journal
// from before it was kept, a platform that does not say) uuldana's own pid counts while it is there, an agent's
// never: an agent is signalled only when it is known to be the one.
function verifiedPid(event: JournalEvent | undefined): number | undefined {
  const pid = event?.pid;
  if (typeof pid !== "number" || !Number.isInteger(pid) || pid <= 0) return undefined;
  if (typeof event!.pid_start === "string") return processStarted(pid) === event!.pid_start ? pid : undefined;
  return event!.type !== "run-start" && processRuns(pid) ? pid : undefined;
}

function whyNotResumable(session: Session): { message: string; hint: string } | undefined {
  const { summary, uuldana, agent } = session;
  const id = summary.id;
  if (summary.state === "damaged") return { message: `session ${id}'s journal is damaged (${summary.reason}), so it cannot be resumed`, hint: `"uuldana sessions show ${id}" shows what can be read of it` };
  if (summary.state === "running") return { message: `session ${id} is still running in uuldana (pid ${uuldana})`, hint: "continue it in the terminal where it runs, or end it there first" };
  if (summary.state === "orphaned") return { message: `session ${id}'s agent ${agent!.entry} (pid ${agent!.pid}) still runs without its uuldana`, hint: `end it with "uuldana sessions stop ${id}", then resume` };
  return undefined;
}

export function whyNotOrphaned(session: Session): string {
  const { summary, uuldana } = session;
  const id = summary.id;
  switch (summary.state) {
    case "damaged":
      return `session ${id}'s journal is damaged (${summary.reason}), so it does not say which agent to stop`;
    case "ended":
      return `session ${id} has ended: no agent of it is running`;
    case "running":
      return `session ${id} is still running in uuldana (pid ${uuldana}): stop it there, or send that uuldana SIGTERM (kill ${uuldana}) and it stops its agent itself`;
    default:
      return `session ${id} was interrupted and none of its agents is running: there is nothing to stop`;
  }
}

// A file the session keeps beside its journal, by the name the journal gives it; undefined when it is gone.
// A run's transcript turns as the session saved them; anything else there (a damaged file) is none.
function savedTurns(text: string | undefined): Turn[] | undefined {
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isTurnList(value) ? copyTurns(value) : undefined;
  } catch {
    return undefined;
  }
}

function readSaved(folder: string, name: string): string | undefined {
  try {
    // a pipe or a folder put in its place is no saved conversation: it is never waited on
    return readRegularFileSync(join(folder, basename(name)));
  } catch {
    return undefined;
  }
}
