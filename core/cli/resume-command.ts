import type { Context } from "../config/context.js";
import { escapeControls } from "../base/safe-text.js";
import { readResumeFacts, sessionToResume } from "../session/sessions.js";
import { checkNodePty } from "../terminal/pty.js";
import type { CommandResult } from "./result.js";
import { refuseLostKeyboard, renderSession } from "./session-report.js";

// uuldana resume [SESSION]: continues a session (by default the newest one begun in this folder) in the same
// journal, starting the first eligible entry with the whole history of its runs as the first prompt.
export async function resumeCommand(context: Context, id: string | undefined, stop?: AbortSignal, wait?: boolean): Promise<CommandResult> {
  // before the session is looked up: a terminal without its keys and a broken install are reported as by run,
  // whatever sessions there are
  refuseLostKeyboard("resume");
  checkNodePty();
  const chosen = sessionToResume(context.dirs.data, id, context.cwd);
  if (chosen.cwd !== context.cwd) process.stderr.write(`uuldana: session ${chosen.id} began in ${escapeControls(chosen.cwd)}; resuming it here, in ${escapeControls(context.cwd)}\n`);
  return renderSession(context, { agentArgs: [], resume: readResumeFacts(context.dirs.data, chosen.id), stop, ...(wait ? { wait } : {}) });
}
