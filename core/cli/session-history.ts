import { join } from "node:path";

import { escapeControls } from "../base/safe-text.js";
import { formatInstant } from "../session/eligibility.js";
import type { JournalEvent } from "../session/journal.js";
import type { Session } from "../session/sessions.js";

// One session's history across providers, as uuldana sessions show prints it (and the demo shows at its end).
export function renderHistory(dataDir: string, session: Session): string {
  const { summary, events } = session;
  const id = summary.id;
  const state = summary.state === "damaged" ? `damaged: ${summary.reason}` : summary.state === "orphaned" ? `orphaned: its agent (pid ${summary.agent_pid}) still runs without uuldana; "uuldana sessions stop ${id}" ends it` : summary.state;
  const header = ["session " + id, ...(summary.started ? [`started ${formatInstant(new Date(summary.started))}`] : []), ...(summary.cwd ? [escapeControls(summary.cwd)] : []), state];
  const lines = [header.join(" · ") + (summary.exit_code === null ? "" : ` (exit ${summary.exit_code})`)];
  for (const event of events) {
    const line = describe(event, join(dataDir, "sessions", id));
    // one line per event, whatever the folder, the agent's text or the user's words in it hold
    if (line) lines.push(`${event.at.slice(11, 16)}  ${escapeControls(line)}`);
  }
  return lines.join("\n") + "\n";
}

// --- internal ---

function describe(event: JournalEvent, folder: string): string | undefined {
  switch (event.type) {
    case "run-start":
      return `${event.entry} started at ${event.level}${Array.isArray(event.argv) && event.argv.some((arg) => String(arg).startsWith("<prompt:")) ? ", with the conversation so far" : ""}`;
    case "user":
      return `you (to ${event.entry}${event.held === true ? ", typed while it was being stopped: handed to the next agent" : ""}): ${String(event.text)}`;
    case "limit":
      if (event.reason === "rotate") return `${event.entry}: rotated before its allowance ran out (${String(event.source)}): ${String(event.text).replace(/\s+/g, " ")}`;
      return `${event.entry}: usage limit (${[event.kind === "unknown" ? "" : event.kind, event.source].filter(Boolean).join(", ")}): ${String(event.text).replace(/\s+/g, " ")}`;
    case "cooldown":
      return `${event.entry} rests until ${instant(event.until)}`;
    case "ignored":
      return `text like a usage limit was ignored at ${event.at.slice(11, 16)}: ${String(event.text).replace(/\s+/g, " ")}`;
    case "skipped":
      return `${event.entry} skipped: ${Array.isArray(event.reasons) ? event.reasons.join("; ") : String(event.reasons)}`;
    case "start-failed":
      return `${event.entry} ${event.receiver === true ? "did not take over" : "could not start"}: ${event.reason}`;
    case "switched":
      return `${event.entry} switched from ${String(event.from)} to ${String(event.to)} in place`;
    case "switch-failed":
      return `${event.entry} could not switch from ${String(event.from)} to ${String(event.to)}: ${String(event.reason)}`;
    case "receiver":
      return event.took === true ? `${event.entry} took the conversation (${receiverSign(event.by)})` : undefined;
    case "conversation":
      return `${event.entry}'s conversation, ${conversationSource(event)}: ${join(folder, String(event.file))}`;
    case "run-end":
      return `${event.entry} ended${event.stopped_by ? ` (stopped by ${event.stopped_by})` : ""}${typeof event.exit_code === "number" ? `, exit ${event.exit_code}` : ""}`;
    case "state":
      return `${event.entry}: ${String(event.why)} (${String(event.from)} → ${String(event.to)})`;
    case "keys-not-delivered":
      return `your keys to ${event.entry} were not delivered (${String(event.reason)}): ${String(event.text)}`;
    case "notify-failed":
      return `notify_command ${String(event.failure)} (${String(event.event)})`;
    case "session-end":
      return `session ended${typeof event.exit_code === "number" ? `, exit ${event.exit_code}` : ""}${event.reason ? ` (${String(event.reason)})` : ""}`;
    default:
      return undefined;
  }
}

// The sign by which an agent showed that it took the conversation handed to it.
function receiverSign(by: unknown): string {
  const signs: Record<string, string> = { screen: "it showed it as its turn", working: "it worked on it", transcript: "its transcript records it", quota: "it reported its quota after answering" };
  return signs[String(by)] ?? String(by);
}

// Where a run's part of the conversation came from, as the history says it.
function conversationSource(event: JournalEvent): string {
  if (event.source === "transcript") {
    const turns = typeof event.turns === "number" ? `, ${event.turns} turn${event.turns === 1 ? "" : "s"}` : "";
    const took = typeof event.read_ms === "number" ? ` read in ${event.read_ms} ms` : "";
    return `from its own transcript (${String(event.transcript)}${turns}${took})`;
  }
  return event.fallback ? `from its screen (${String(event.fallback)})` : "from its screen";
}

// A time from the journal as the history shows it; one that is not a time is shown as written.
function instant(value: unknown): string {
  const date = new Date(String(value));
  return Number.isNaN(date.getTime()) ? String(value) : formatInstant(date);
}

