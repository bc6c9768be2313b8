// Everything POSIX-specific about processes and the user's terminal, kept in one place for a Windows path.
import { spawnSync } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync } from "node:fs";
import { isatty } from "node:tty";

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

// The signals that ask uuldana to stop: the agent is left the graceful way and the session ends.
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ["SIGTERM", "SIGHUP", "SIGINT"];

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

// The modes an agent has switched on in the user's terminal, read from its output as it passes through. The screen
// model runs behind on a thread of its own; deciding what to draw or undo needs what the terminal has now.
export class LiveModes {
  readonly modes: TerminalModes = { ...NO_MODES };
  private kittyDepth = 0;
  // the start of a sequence cut off at the end of the last chunk
  private carry = "";

  write(chunk: Buffer): void {
    // most chunks hold no escape at all; sequences are ASCII, so latin1 reads them without decoding UTF-8
    if (!this.carry && !chunk.includes(0x1b)) return;
    const text = this.carry + chunk.toString("latin1");
    const cut = text.lastIndexOf("\x1b");
    this.carry = cut !== -1 && text.length - cut < 24 && !/^\x1b(?:\[[?<>=]?[\d;]*[@-~]|[^[])/.test(text.slice(cut)) ? text.slice(cut) : "";
    for (const match of text.matchAll(/\x1b\[\?([\d;]+)([hl])|\x1b\[>\d*u|\x1b\[<(\d*)u|\x1b([=>])/g)) {
      if (match[1]) for (const param of match[1].split(";")) this.setPrivate(param, match[2] === "h");
      else if (match[0].endsWith("u")) this.kittyDepth = match[0][2] === ">" ? this.kittyDepth + 1 : Math.max(0, this.kittyDepth - (Number(match[3]) || 1));
      else this.modes.applicationKeypad = match[4] === "=";
    }
    this.modes.kittyKeyboard = this.kittyDepth > 0;
  }

  private setPrivate(param: string, on: boolean): void {
    const modes = this.modes;
    if (param === "1049" || param === "1047" || param === "47") modes.altScreen = on;
    else if (param === "2004") modes.bracketedPaste = on;
    else if (["9", "1000", "1002", "1003"].includes(param)) modes.mouse = on;
    else if (param === "1004") modes.focus = on;
    else if (param === "25") modes.cursorHidden = !on;
    else if (param === "1") modes.applicationCursor = on;
  }
}

// When a process began, as the system keeps it, or undefined when it is gone, a zombie, or the platform does not
// say. A later process given the same pid began at another time: the guard against a reused pid.
export function processStarted(pid: number): string | undefined {
  if (IS_WINDOWS || !Number.isInteger(pid) || pid <= 0) return undefined;
  if (process.platform === "linux") {
    const stat = procStat(pid);
    if (!stat || stat.state === "Z") return undefined;
    // clock ticks since boot, and which boot: ticks alone start again after a restart
    return `${bootId()}:${stat.startTicks}`;
  }
  const ps = spawnSync("ps", ["-o", "stat=,lstart=", "-p", String(pid)], { encoding: "utf8" });
  const line = ps.status === 0 ? ps.stdout.trim() : "";
  return !line || line.startsWith("Z") ? undefined : line.replace(/^\S+\s+/, "");
}

// Whether a process still runs: not when no process has the pid, when it is a zombie, or when the pid now belongs to
// a process that began at another time than `started` (as processStarted gave it). Another user's process runs too.
export function processRuns(pid: number, started: string | null = null): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
  }
  const now = processStarted(pid);
  // Linux always says when a process began (nothing: gone or a zombie); elsewhere ps may not, and then it runs
  if (now === undefined) return process.platform !== "linux";
  return started === null || now === started;
}

// True while a process of the group still runs; unlike groupAlive, zombies nobody has reaped yet do not count
// (an agent whose uuldana is gone is reaped by whatever adopted it, if at all).
export function groupRunning(pid: number): boolean {
  if (!groupAlive(pid)) return false;
  if (process.platform !== "linux") return true;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return true;
  }
  return entries.some((entry) => {
    if (!/^\d+$/.test(entry)) return false;
    const stat = procStat(Number(entry));
    return stat !== undefined && stat.group === pid && stat.state !== "Z";
  });
}

function procStat(pid: number): { state: string; group: number; startTicks: string } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // after the command's name (in parentheses, and it may hold spaces): state, ppid, pgrp, … field 22 is starttime
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state: fields[0] ?? "", group: Number(fields[2]), startTicks: fields[19] ?? "" };
}

// Which boot of the machine this is (Linux), so a time counted from boot is not taken for one of another boot.
export function bootId(): string {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return "boot";
  }
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
