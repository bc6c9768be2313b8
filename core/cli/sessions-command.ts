import { readdirSync } from "node:fs";
import { join } from "node:path";

import type { Context } from "../config/context.js";
import { formatInstant } from "../session/eligibility.js";
import { UuldanaError } from "../base/errors.js";
import { Journal, checkSessionsFolder, inspectJournal, type JournalEvent } from "../session/journal.js";
import { result, type CommandResult } from "./result.js";
import { escapeControls } from "../base/safe-text.js";
import { stopGroupNow } from "../host/stop.js";
import { renderTable } from "./table.js";
import { processRuns, processStarted } from "../base/process.js";

type SessionState = "running" | "ended" | "interrupted" | "orphaned" | "damaged";

interface SessionSummary {
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
interface Session {
  summary: SessionSummary;
  events: JournalEvent[];
  uuldana: number | undefined;
  agent: { pid: number; entry: string } | undefined;
}

// How long each signal has to end an orphaned agent.
const STOP_STEP_MS = 2000;

// uuldana sessions: every session, newest first, with the entries it ran and how it stands.
export function listSessions(context: Context, options: { json?: boolean }): CommandResult {
  const sessions = readSessions(context.dirs.data).map((session) => session.summary);
  if (options.json) return result(JSON.stringify(sessions, null, 2) + "\n");
  if (sessions.length === 0) return result("No sessions yet.\n");
  const rows = sessions.map((s) => [
    s.id,
    s.started ? formatInstant(new Date(s.started)) : "-",
    s.cwd || "-",
    s.runs.join(" → ") || "-",
    s.reason ? `${s.state}: ${s.reason}` : s.state,
  ]);
  return result(renderTable(["SESSION", "STARTED", "FOLDER", "RUNS", "STATE"], rows));
}

// uuldana sessions show ID: the history across providers, or its events as JSON.
export function showSession(context: Context, id: string, options: { json?: boolean }): CommandResult {
  const { summary, events } = findSession(context, id);
  const damaged = summary.state === "damaged" ? `uuldana: session ${id}'s journal is damaged: ${summary.reason}\n` : "";
  if (options.json) return result(JSON.stringify(events, null, 2) + "\n", damaged);
  const state = summary.state === "damaged" ? `damaged: ${summary.reason}` : summary.state === "orphaned" ? `orphaned: its agent (pid ${summary.agent_pid}) still runs without uuldana; "uuldana sessions stop ${id}" ends it` : summary.state;
  const header = ["session " + id, ...(summary.started ? [`started ${formatInstant(new Date(summary.started))}`] : []), ...(summary.cwd ? [escapeControls(summary.cwd)] : []), state];
  const lines = [header.join(" · ") + (summary.exit_code === null ? "" : ` (exit ${summary.exit_code})`)];
  for (const event of events) {
    const line = describe(event, join(context.dirs.data, "sessions", id));
    // one line per event, whatever the folder, the agent's text or the user's words in it hold
    if (line) lines.push(`${event.at.slice(11, 16)}  ${escapeControls(line)}`);
  }
  return result(lines.join("\n") + "\n");
}

// uuldana sessions stop ID: ends the agent a session's uuldana left running, with the stop ladder, and ends the
// session in its journal. Exit 0 when it did; 1, saying why, when the session has no such agent.
export function stopSession(context: Context, id: string): CommandResult {
  const session = findSession(context, id);
  const { agent } = session;
  if (!agent) throw new UuldanaError("E_SESSION_NOT_ORPHANED", whyNotOrphaned(session), { exitCode: 1 });
  const step = stopGroupNow(agent.pid, STOP_STEP_MS);
  const journal = new Journal(context.dirs.data, id);
  try {
    journal.write("run-end", { entry: agent.entry, exit_code: null, signal: null, stopped_by: step === "exited" ? null : step });
    journal.write("session-end", { exit_code: null, reason: `its uuldana was gone; uuldana sessions stop ${step === "exited" ? "found its agent exited" : `stopped its agent with ${step}`}` });
  } finally {
    journal.close();
  }
  const what = `${agent.entry} (pid ${agent.pid}), left running by session ${id} when its uuldana was gone`;
  return result(step === "exited" ? `${what}, had exited by itself\n` : `stopped ${what}, with ${step}\n`);
}

// The sessions that can be continued, newest first, with the folder each began in (a damaged one cannot be).
export function listSessionIds(dataDir: string): { id: string; cwd: string }[] {
  return readSessions(dataDir)
    .filter((session) => !whyNotResumable(session))
    .map(({ summary: { id, cwd } }) => ({ id, cwd }));
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

// --- internal ---

function findSession(context: Context, id: string): Session {
  const session = /^[0-9a-z]+$/.test(id) ? readSessions(context.dirs.data).find((s) => s.summary.id === id) : undefined;
  if (!session) throw new UuldanaError("E_USAGE", `no session "${id}"`, { hint: 'run "uuldana sessions" to see the sessions' });
  return session;
}

function readSessions(dataDir: string): Session[] {
  if (!checkSessionsFolder(dataDir)) return [];
  const folder = join(dataDir, "sessions");
  // a session is a folder named by its id; anything else there is not one
  return readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && /^[0-9a-z]+$/.test(entry.name))
    .map((entry) => readSession(entry.name, join(folder, entry.name)))
    .sort((a, b) => (b.summary.started ?? "").localeCompare(a.summary.started ?? "") || b.summary.id.localeCompare(a.summary.id));
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

function whyNotOrphaned(session: Session): string {
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

function describe(event: JournalEvent, folder: string): string | undefined {
  switch (event.type) {
    case "run-start":
      return `${event.entry} started at ${event.level}${Array.isArray(event.argv) && event.argv.some((arg) => String(arg).startsWith("<prompt:")) ? ", with the conversation so far" : ""}`;
    case "user":
      return `you (to ${event.entry}): ${String(event.text)}`;
    case "limit":
      return `${event.entry}: usage limit (${[event.kind === "unknown" ? "" : event.kind, event.source].filter(Boolean).join(", ")}): ${String(event.text).replace(/\s+/g, " ")}`;
    case "cooldown":
      return `${event.entry} rests until ${instant(event.until)}`;
    case "ignored":
      return `text like a usage limit was ignored at ${event.at.slice(11, 16)}: ${String(event.text).replace(/\s+/g, " ")}`;
    case "skipped":
      return `${event.entry} skipped: ${Array.isArray(event.reasons) ? event.reasons.join("; ") : String(event.reasons)}`;
    case "start-failed":
      return `${event.entry} could not start: ${event.reason}`;
    case "conversation":
      return `${event.entry}'s conversation: ${join(folder, String(event.file))}`;
    case "run-end":
      return `${event.entry} ended${event.stopped_by ? ` (stopped by ${event.stopped_by})` : ""}${typeof event.exit_code === "number" ? `, exit ${event.exit_code}` : ""}`;
    case "session-end":
      return `session ended${typeof event.exit_code === "number" ? `, exit ${event.exit_code}` : ""}${event.reason ? ` (${String(event.reason)})` : ""}`;
    default:
      return undefined;
  }
}

// A time from the journal as the history shows it; one that is not a time is shown as written.
function instant(value: unknown): string {
  const date = new Date(String(value));
  return Number.isNaN(date.getTime()) ? String(value) : formatInstant(date);
}

