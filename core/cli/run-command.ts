import type { Context } from "../config/context.js";
import type { Level } from "../config/levels.js";
import type { CommandResult } from "./result.js";
import { refuseLostKeyboard, renderSession } from "./session-report.js";

export interface RunOptions {
  provider?: string;
  ceiling?: Level;
  failover?: boolean;
  wait?: boolean;
  agentArgs: string[];
  // aborted by the CLI when a signal asks uuldana to stop
  stop?: AbortSignal;
}

// uuldana run: a session in this terminal; its lines go to stderr as it runs, its ending when it is over.
export async function runCommand(context: Context, options: RunOptions): Promise<CommandResult> {
  refuseLostKeyboard("run");
  return renderSession(context, options);
}
