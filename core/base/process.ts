// Processes as POSIX keeps them: groups, signals, when a process began, which boot this is; one place for a Windows path.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

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
  return (runningInGroup(pid)?.length ?? 1) > 0;
}

// The processes of a group that still run, each with when it began, to tell later that the group is still the one
// seen (its id can be given again once it is empty). Linux only; undefined where the platform does not say.
export function groupMembers(pgid: number): { pid: number; started: string }[] | undefined {
  return runningInGroup(pgid)?.flatMap((pid) => {
    const started = processStarted(pid);
    return started ? [{ pid, started }] : [];
  });
}

// Whether a group seen earlier (its members as groupMembers gave them) still has one of those processes in it; where
// members are not known, whether any process of the group is there.
export function groupStillThere(pgid: number, seen: { pid: number; started: string }[] | undefined): boolean {
  if (!seen) return groupAlive(pgid);
  return seen.some((member) => processRuns(member.pid, member.started) && procStat(member.pid)?.group === pgid);
}

// The pids of a group's processes that are not zombies, from /proc; undefined where the platform does not say.
function runningInGroup(pgid: number): number[] | undefined {
  if (process.platform !== "linux") return undefined;
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return undefined;
  }
  return entries.filter((entry) => /^\d+$/.test(entry)).map(Number).filter((pid) => {
    const stat = procStat(pid);
    return stat !== undefined && stat.group === pgid && stat.state !== "Z";
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

