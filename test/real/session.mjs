// The one uuldana session a real-agent check ran, read from its journal in the data dir.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

// { id, events } of the session, or undefined while there is none (or more than one).
export function sessionOf(dataDir) {
  let ids = [];
  try {
    ids = readdirSync(join(dataDir, "sessions"));
  } catch {
    return undefined;
  }
  if (ids.length !== 1) return undefined;
  const journal = readFileSync(join(dataDir, "sessions", ids[0], "journal.jsonl"), "utf8");
  return { id: ids[0], events: journal.split("\n").filter(Boolean).map((line) => JSON.parse(line)) };
}

// Stops the session a check left running, so no agent outlives the test: its uuldana gets SIGTERM (its agent leaves
// the graceful way) unless the terminal's shell already printed uuldana's exit code.
export async function stopSession(dataDir, terminal) {
  const pid = uuldanaPid(dataDir);
  if (!pid || /^code \d+/m.test(terminal.plainOutput())) return;
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  await terminal.waitFor(() => /^code \d+/m.test(terminal.plainOutput()), 20_000);
}

// The pid of the uuldana process running the session, as its start recorded it.
export function uuldanaPid(dataDir) {
  return sessionOf(dataDir)?.events.find((event) => event.type === "session-start")?.pid;
}
