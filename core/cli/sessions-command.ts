import { UuldanaError } from "../base/errors.js";
import type { Context } from "../config/context.js";
import { stopGroupNow } from "../host/stop.js";
import { formatInstant } from "../session/eligibility.js";
import { Journal } from "../session/journal.js";
import { findSession, readSessions, whyNotOrphaned } from "../session/sessions.js";
import { result, type CommandResult } from "./result.js";
import { renderHistory } from "./session-history.js";
import { renderTable } from "./table.js";

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
  const session = findSession(context.dirs.data, id);
  const { summary, events } = session;
  const damaged = summary.state === "damaged" ? `uuldana: session ${id}'s journal is damaged: ${summary.reason}\n` : "";
  if (options.json) return result(JSON.stringify(events, null, 2) + "\n", damaged);
  return result(renderHistory(context.dirs.data, session));
}

// uuldana sessions stop ID: ends the agent a session's uuldana left running, with the stop ladder, and ends the
// session in its journal. Exit 0 when it did; 1, saying why, when the session has no such agent.
export function stopSession(context: Context, id: string): CommandResult {
  const session = findSession(context.dirs.data, id);
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

// --- internal ---
