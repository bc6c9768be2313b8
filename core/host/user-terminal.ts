import type { AgentPty } from "../terminal/pty.js";
import type { Screen } from "../terminal/screen.js";
import { TITLE_POP, TITLE_PUSH, holdTerminal, releaseTerminal, restoreSequence, setRawInput, titleSequence } from "../terminal/tty.js";
import type { AgentOutput } from "./agent-output.js";
import type { PromptOverlay } from "./prompt-overlay.js";

// The terminal a run talks to: the user's own, or plain streams (a test, a pipe).
export interface UserTerminal {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  // both ends are a terminal: the command key, raw input, the title and resizes apply
  interactive: boolean;
  size: { cols: number; rows: number };
}

// The streams a run is given, or the process's own, and the size the agent starts with.
export function userTerminal(streams: { stdin?: NodeJS.ReadStream; stdout?: NodeJS.WriteStream }): UserTerminal {
  const stdin = streams.stdin ?? process.stdin;
  const stdout = streams.stdout ?? process.stdout;
  const interactive = Boolean(stdin.isTTY && stdout.isTTY);
  const size = interactive
    ? { cols: stdout.columns || 80, rows: stdout.rows || 24 }
    : { cols: Number(process.env.COLUMNS) || 80, rows: Number(process.env.LINES) || 24 };
  return { stdin, stdout, interactive, size };
}

// Takes the user's terminal for a run (raw input, uuldana's title pushed, its resizes passed to the agent) and
// returns the call that gives it back as the run found it; a crash of uuldana gives it back too (holdTerminal).
export function takeUserTerminal(terminal: UserTerminal, run: { agent: AgentPty; screen: Screen; output: AgentOutput; overlay: PromptOverlay }): () => void {
  const { stdout, interactive } = terminal;
  const restore = (): void => giveBack(terminal, run);
  holdTerminal(restore);
  if (!interactive) return () => releaseTerminal(restore);
  stdout.write(TITLE_PUSH + titleSequence(run.output.title("")));
  setRawInput(true);
  const onResize = (): void => {
    const cols = stdout.columns || run.screen.cols;
    const rows = stdout.rows || run.screen.rows;
    run.screen.resize(cols, rows);
    run.agent.resize(cols, rows);
  };
  stdout.on("resize", onResize);
  return () => {
    stdout.off("resize", onResize);
    releaseTerminal(restore);
  };
}

// --- internal ---

// uuldana's prompt closed, cooked input, the agent's modes turned off, the title popped.
function giveBack(terminal: UserTerminal, run: { screen: Screen; output: AgentOutput; overlay: PromptOverlay }): void {
  try {
    // nothing of the agent's is written after the terminal is given back (uuldana may be crashing while it runs)
    run.output.end();
    run.overlay.close();
  } finally {
    if (terminal.interactive) {
      setRawInput(false);
      // an agent on the normal screen that left its cursor mid-line: the next line is uuldana's, not a tail of its own
      const modes = run.screen.modes;
      const newline = !modes.altScreen && !run.output.endedLine ? "\r\n" : "";
      terminal.stdout.write(restoreSequence(modes) + TITLE_POP + newline);
    }
  }
}
