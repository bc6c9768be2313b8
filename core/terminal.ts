// Everything POSIX-specific about processes and the user's terminal, kept in one place for a Windows path.

export const IS_WINDOWS = process.platform === "win32";

// Sends a signal to a process's whole group (the agent and whatever it started); false when nothing was there.
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(IS_WINDOWS ? pid : -pid, signal);
    return true;
  } catch {
    return false;
  }
}

// True while any process of the group is still there.
export function groupAlive(pid: number): boolean {
  if (IS_WINDOWS) {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
  try {
    process.kill(-pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function signalNumber(signal: NodeJS.Signals): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };
  return numbers[signal] ?? 0;
}

export interface TerminalModes {
  altScreen: boolean;
  bracketedPaste: boolean;
  mouse: boolean;
  focus: boolean;
  kittyKeyboard: boolean;
  cursorHidden: boolean;
  applicationCursor: boolean;
  applicationKeypad: boolean;
}

// The bytes that undo what an agent may have left switched on in the user's terminal.
export function restoreSequence(modes: TerminalModes): string {
  let out = "\x1b[0m";
  if (modes.altScreen) out += "\x1b[?1049l";
  if (modes.bracketedPaste) out += "\x1b[?2004l";
  if (modes.mouse) out += "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1015l";
  if (modes.focus) out += "\x1b[?1004l";
  if (modes.kittyKeyboard) out += "\x1b[<99u";
  if (modes.applicationCursor) out += "\x1b[?1l";
  if (modes.applicationKeypad) out += "\x1b>";
  return out + "\x1b[?25h";
}

export const TITLE_PUSH = "\x1b[22;0t";
export const TITLE_POP = "\x1b[23;0t";

export function titleSequence(title: string): string {
  return `\x1b]0;${title}\x07`;
}

// The user's terminal in raw mode while an agent runs; restore() puts it back however uuldana ends.
export function setRawInput(on: boolean): void {
  const stdin = process.stdin;
  if (stdin.isTTY && stdin.isRaw !== on) stdin.setRawMode(on);
}
