import { spawn, type ChildProcess } from "node:child_process";

import { groupMembers, groupStillThere, IS_WINDOWS, signalGroup } from "../base/process.js";
import { alertKind, alertSequence } from "../terminal/alerts.js";
import type { Journal } from "./journal.js";

// What the user is told of while a session runs: the session moved to another entry at a limit, rotated before one,
// waits for a reset, went back to a preferred entry, or has nothing left to run.
export type NotifyEvent = "failover" | "rotate" | "wait" | "home" | "nothing-can-run";

// The facts of one notification: the entries it concerns, when a rest ends, and a sentence saying it.
export interface NotifyFacts {
  from?: string | undefined;
  to?: string | undefined;
  until?: Date | undefined;
  text: string;
}

export interface NotifierOptions {
  sessionId: string;
  // the user's "notify": false turns the bell, the desktop notification and notify_command off
  notify: boolean;
  // the user's notify_command: an argv, never a shell line
  command: string[] | undefined;
  // the terminal the session shows its agents on; written to only when it is one
  stdout: NodeJS.WriteStream;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  journal: Journal;
  // how long notify_command may run before it is killed, with all it started
  timeoutMs?: number;
}

const TIMEOUT_MS = 10_000;

const TOLD_OF: Record<NotifyEvent, string> = {
  failover: "a failover",
  rotate: "a rotation",
  wait: "a wait for a reset",
  home: "a return home",
  "nothing-can-run": "that no entry can run",
};

// Tells the user of a session's events, once per session: the bell and a desktop notification on their terminal,
// and their notify_command with the event as JSON on its stdin. Create one per session; call send() between runs,
// at the moment uuldana says its own line, never while an agent holds the screen.
export class Notifier {
  private readonly running = new Set<Promise<void>>();
  // each notify_command runs in a process group of its own: those still running, and those whose command ended but
  // left processes in its group (with the processes seen then), to be killed with uuldana's end
  private readonly groups = new Set<ChildProcess>();
  private readonly leftovers: { pgid: number; members: { pid: number; started: string }[] | undefined }[] = [];
  // the line saying notify_command failed, until it is taken; said once a session
  private unsaid: string | undefined;
  private failed = false;

  constructor(private readonly options: NotifierOptions) {}

  // Tells the user of an event. Never throws and never waits: notify_command runs on its own, bounded in time.
  send(event: NotifyEvent, facts: NotifyFacts): void {
    if (!this.options.notify) return;
    const { stdout } = this.options;
    if (stdout.isTTY) stdout.write(alertSequence(alertKind(this.options.env), facts.text));
    if (this.options.command) this.runCommand(event, facts, this.options.command);
  }

  // The line to say that notify_command failed: once a session, at the first failure; empty otherwise.
  takeProblems(): string[] {
    const line = this.unsaid;
    this.unsaid = undefined;
    return line ? [line] : [];
  }

  // Waits for the notify commands still running (each ends within its bound), for the end of the session.
  async settle(): Promise<void> {
    while (this.running.size) await Promise.all([...this.running]);
  }

  // Kills what notify commands left running, as uuldana's session ends (on every path it ends by): each command's
  // process group while it is still the one the command made. Nothing a notify_command started outlives uuldana.
  close(): void {
    for (const child of this.groups) if (child.pid !== undefined) signalGroup(child.pid, "SIGKILL");
    for (const { pgid, members } of this.leftovers.splice(0)) if (groupStillThere(pgid, members)) signalGroup(pgid, "SIGKILL");
  }

  // --- internal ---

  private runCommand(event: NotifyEvent, facts: NotifyFacts, argv: string[]): void {
    const payload = {
      event,
      session: this.options.sessionId,
      from: facts.from ?? null,
      to: facts.to ?? null,
      until: facts.until?.toISOString() ?? null,
      text: facts.text,
    };
    const group = { started: (child: ChildProcess) => this.groups.add(child), ended: (child: ChildProcess) => this.ended(child) };
    const done = runBounded(argv, JSON.stringify(payload) + "\n", this.options, group).then((failure) => {
      this.running.delete(done);
      if (failure) this.fail(event, failure);
    });
    this.running.add(done);
  }

  // A command's end: what it left in its group is remembered, to be killed at the session's end.
  private ended(child: ChildProcess): void {
    this.groups.delete(child);
    if (child.pid === undefined || IS_WINDOWS) return;
    const members = groupMembers(child.pid);
    if (members === undefined || members.length > 0) this.leftovers.push({ pgid: child.pid, members });
  }

  private fail(event: NotifyEvent, failure: string): void {
    // the program only: the rest of the argv may hold a token (a webhook's URL) that no file should keep
    this.options.journal.write("notify-failed", { event, failure });
    if (this.failed) return;
    this.failed = true;
    this.unsaid = `uuldana: notify_command ${failure} when told of ${TOLD_OF[event]}; later failures in this session are only written to the journal`;
  }
}

// Runs an argv in a process group of its own, with text on its stdin and its output dropped; kills the group after
// the bound. Resolves with how it failed, or undefined when it exited 0.
function runBounded(argv: string[], input: string, options: NotifierOptions, group: { started(child: ChildProcess): void; ended(child: ChildProcess): void }): Promise<string | undefined> {
  const [file, ...args] = argv;
  const bound = options.timeoutMs ?? TIMEOUT_MS;
  return new Promise((resolve) => {
    let settled = false;
    let timedOut = false;
    const end = (failure: string | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(failure);
    };
    // detached: a session and process group of its own, so what it starts can be killed with it
    const child = spawn(file!, args, { cwd: options.cwd, env: options.env as NodeJS.ProcessEnv, stdio: ["pipe", "ignore", "ignore"], detached: !IS_WINDOWS });
    group.started(child);
    const timer = setTimeout(() => {
      timedOut = true;
      if (IS_WINDOWS || !signalGroup(child.pid!, "SIGKILL")) child.kill("SIGKILL");
    }, bound);
    child.on("error", (error: NodeJS.ErrnoException) => {
      group.ended(child);
      end(`(${file}) could not be started (${error.code ?? error.message})`);
    });
    child.on("exit", (code, signal) => {
      group.ended(child);
      if (timedOut) end(`(${file}) did not end within ${bound / 1000} seconds and was killed`);
      else if (signal) end(`(${file}) was killed by ${signal}`);
      else end(code === 0 ? undefined : `(${file}) exited with code ${code}`);
    });
    // a command that does not read its stdin is no failure
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}
