import { basename, join } from "node:path";

import type { Context } from "../config/context.js";
import { readRegularFileSync } from "../base/files.js";
import type { RunPart } from "../session/handoff.js";
import { readJournal } from "../session/journal.js";
import { checkNodePty } from "../terminal/pty.js";
import type { CommandResult } from "./result.js";
import { runCommand } from "./run-command.js";
import { escapeControls } from "../base/safe-text.js";
import { sessionToResume } from "./sessions-command.js";

// uuldana resume [SESSION]: continues a session (by default the newest one begun in this folder) in the same
// journal, starting the first eligible entry with the whole history of its runs as the first prompt.
export async function resumeCommand(context: Context, id: string | undefined): Promise<CommandResult> {
  // before the session is looked up: a broken install is reported as by run, whatever sessions there are
  checkNodePty();
  const chosen = sessionToResume(context.dirs.data, id, context.cwd);
  if (chosen.cwd !== context.cwd) process.stderr.write(`uuldana: session ${chosen.id} began in ${escapeControls(chosen.cwd)}; resuming it here, in ${escapeControls(context.cwd)}\n`);
  const folder = join(context.dirs.data, "sessions", chosen.id);
  const events = readJournal(join(folder, "journal.jsonl"));
  const parts: RunPart[] = [];
  let stopText: Record<string, string> = {};
  // the handoff prompt of the run being read, saved beside the journal
  let prompt: string | undefined;
  for (const event of events) {
    if (event.type === "limit") stopText = { ...stopText, [String(event.entry)]: String(event.text) };
    if (event.type === "run-start") prompt = typeof event.prompt_file === "string" ? readSaved(folder, event.prompt_file) : undefined;
    if (event.type !== "conversation") continue;
    const entry = String(event.entry);
    const conversation = readSaved(folder, String(event.file));
    if (conversation === undefined) continue;
    parts.push({ entry, name: typeof event.name === "string" ? event.name : entry, conversation, ...(stopText[entry] ? { stopText: stopText[entry] } : {}), ...(prompt ? { prompt } : {}) });
  }
  const spoken = events.some((event) => event.type === "user");
  const lastEntry = events.filter((event) => event.type === "run-start").map((event) => String(event.entry)).at(-1);
  return runCommand(context, { agentArgs: [], resume: { sessionId: chosen.id, parts, spoken, lastEntry } });
}

// A file the session keeps beside its journal, by the name the journal gives it; undefined when it is gone.
function readSaved(folder: string, name: string): string | undefined {
  try {
    // a pipe or a folder put in its place is no saved conversation: it is never waited on
    return readRegularFileSync(join(folder, basename(name)));
  } catch {
    return undefined;
  }
}
