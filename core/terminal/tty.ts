// The user's terminal: the modes an agent switches on and how to undo them, the title, raw input, a terminal that is gone.
import { closeSync, openSync } from "node:fs";
import { isatty } from "node:tty";

import { IS_WINDOWS } from "../base/process.js";

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

// A terminal as uuldana found it: nothing switched on.
export const NO_MODES: Readonly<TerminalModes> = {
  altScreen: false,
  bracketedPaste: false,
  mouse: false,
  focus: false,
  kittyKeyboard: false,
  cursorHidden: false,
  applicationCursor: false,
  applicationKeypad: false,
};

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

// The standard streams that were a terminal when uuldana started.
const STARTED_ON_TTY = [0, 1, 2].filter((fd) => isatty(fd));

// When the user's terminal has gone (its window closed, the connection dropped), a terminal that hung up no longer
// answers as one: its streams are swapped for the null device, so that Node's own reset of the terminal at exit,
// which fails on a terminal that is gone (and aborts, on Node 20), has nothing to reset. A live terminal is left
// as it is. Call it as the process exits.
export function releaseLostTerminal(): void {
  if (IS_WINDOWS) return;
  for (const fd of STARTED_ON_TTY) {
    if (isatty(fd)) continue;
    try {
      closeSync(fd);
      openSync("/dev/null", fd === 0 ? "r" : "w");
    } catch {
      // nothing more can be done for a stream that is gone
    }
  }
}

let restoreActive: (() => void) | undefined;

// A run holds the user's terminal: how to put it back (cooked mode, modes off, title), called once by whichever
// exit path comes first.
export function holdTerminal(restore: () => void): void {
  restoreActive = restore;
}

// Puts the user's terminal back if a run holds it; safe to call on any exit path, and more than once.
export function restoreTerminal(): void {
  const restore = restoreActive;
  restoreActive = undefined;
  restore?.();
}

// Puts the user's terminal back if this run's restore is what holds it (a later run may hold it already).
export function releaseTerminal(restore: () => void): void {
  if (restoreActive === restore) restoreTerminal();
}
