import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

import type { Context } from "./context.js";
import { formatInstant } from "./eligibility.js";
import { UuldanaError } from "./errors.js";
import { readJournal, type JournalEvent } from "./journal.js";
import { result, type CommandResult } from "./result.js";
import { escapeControls } from "./safe-text.js";
import { renderTable } from "./table.js";

interface SessionSummary {
  id: string;
  started: string;
  cwd: string;
  runs: string[];
  state: "running" | "ended" | "interrupted";
  exit_code: number | null;
}

// uuldana sessions: every session, newest first, with the entries it ran and how it stands.
export function listSessions(context: Context, options: { json?: boolean }): CommandResult {
  const sessions = readSessions(context.dirs.data);
  if (options.json) return result(JSON.stringify(sessions, null, 2) + "\n");
  if (sessions.length === 0) return result("No sessions yet.\n");
  const rows = sessions.map((s) => [s.id, formatInstant(new Date(s.started)), s.cwd, s.runs.join(" → ") || "-", s.state]);
  return result(renderTable(["SESSION", "STARTED", "FOLDER", "RUNS", "STATE"], rows));
}

// uuldana sessions show ID: the history across providers, or its events as JSON.
export function showSession(context: Context, id: string, options: { json?: boolean }): CommandResult {
  const file = join(context.dirs.data, "sessions", id, "journal.jsonl");
  if (!/^[0-9a-z]+$/.test(id) || !existsSync(file)) {
    throw new UuldanaError("E_USAGE", `no session "${id}"`, { hint: 'run "uuldana sessions" to see the sessions' });
  }
  const events = readJournal(file);
  if (options.json) return result(JSON.stringify(events, null, 2) + "\n");
  const summary = summarize(id, events);
  const lines = [`session ${id} · started ${formatInstant(new Date(summary.started))} · ${escapeControls(summary.cwd)} · ${summary.state}${summary.exit_code === null ? "" : ` (exit ${summary.exit_code})`}`];
  for (const event of events) {
    const line = describe(event, join(context.dirs.data, "sessions", id));
    // one line per event, whatever the folder, the agent's text or the user's words in it hold
    if (line) lines.push(`${event.at.slice(11, 16)}  ${escapeControls(line)}`);
  }
  return result(lines.join("\n") + "\n");
}

// The sessions, newest first, with the folder each began in.
export function listSessionIds(dataDir: string): { id: string; cwd: string }[] {
  return readSessions(dataDir).map(({ id, cwd }) => ({ id, cwd }));
}

// --- internal ---

function readSessions(dataDir: string): SessionSummary[] {
  const folder = join(dataDir, "sessions");
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((id) => existsSync(join(folder, id, "journal.jsonl")))
    .map((id) => summarize(id, readJournal(join(folder, id, "journal.jsonl"))))
    .sort((a, b) => b.started.localeCompare(a.started) || b.id.localeCompare(a.id));
}

function summarize(id: string, events: JournalEvent[]): SessionSummary {
  const start = events.find((event) => event.type === "session-start");
  const end = events.find((event) => event.type === "session-end");
  const pid = typeof start?.pid === "number" ? start.pid : undefined;
  const state = end ? "ended" : pid !== undefined && alive(pid) ? "running" : "interrupted";
  return {
    id,
    started: start?.at ?? events[0]?.at ?? "",
    cwd: typeof start?.cwd === "string" ? start.cwd : "",
    runs: events.filter((event) => event.type === "run-start").map((event) => String(event.entry)),
    state,
    exit_code: typeof end?.exit_code === "number" ? end.exit_code : null,
  };
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
      return `${event.entry} rests until ${formatInstant(new Date(String(event.until)))}`;
    case "ignored":
      return `text like a usage limit was ignored at ${event.at.slice(11, 16)}: ${String(event.text).replace(/\s+/g, " ")}`;
    case "skipped":
      return `${event.entry} skipped: ${(event.reasons as string[]).join("; ")}`;
    case "start-failed":
      return `${event.entry} could not start: ${event.reason}`;
    case "conversation":
      return `${event.entry}'s conversation: ${join(folder, String(event.file))}`;
    case "run-end":
      return `${event.entry} ended${event.stopped_by ? ` (stopped by ${event.stopped_by})` : ""}, exit ${event.exit_code}`;
    case "session-end":
      return `session ended, exit ${event.exit_code}`;
    default:
      return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
