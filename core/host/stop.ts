import { typeKeys } from "./keys.js";
import type { AgentPty } from "../terminal/pty.js";
import { groupRunning, signalGroup } from "../base/process.js";

// Which step of the graceful stop ended the agent.
// How a manifest says its agent is left: keys to type, how long to wait, then signals to its group.
export interface ExitSteps {
  keys?: string[];
  wait_seconds?: number;
  signals?: string[];
  signal_wait_seconds?: number;
}

export type StopStep = "exited" | "keys" | "SIGINT" | "SIGHUP" | "SIGTERM" | "SIGKILL";

export interface StopResult {
  step: StopStep;
  durationMs: number;
}


// Stops an agent as its manifest says: type the exit keys (each step a separate write, so text and Enter are not
// taken for one paste), wait, then signal its process group in turn, then KILL. Nothing of the group is left.
export async function stopAgent(agent: AgentPty, exit: ExitSteps = {}, options: { keys?: boolean } = {}): Promise<StopResult> {
  const started = Date.now();
  let done = false;
  void agent.exited.then(() => (done = true));
  const finish = (step: StopStep): StopResult => {
    agent.signal("SIGKILL");
    return { step, durationMs: Date.now() - started };
  };
  if (await exitedWithin(agent, 0)) return finish("exited");
  agent.letGo();
  if (options.keys !== false && exit.keys?.length) {
    await typeKeys(agent, exit.keys, () => done);
    if (await exitedWithin(agent, (exit.wait_seconds ?? 3) * 1000)) return finish("keys");
  }
  for (const signal of (exit.signals ?? ["SIGHUP", "SIGTERM"]) as ("SIGINT" | "SIGHUP" | "SIGTERM")[]) {
    agent.signal(signal);
    if (await exitedWithin(agent, (exit.signal_wait_seconds ?? 2) * 1000)) return finish(signal);
  }
  agent.signal("SIGKILL");
  await exitedWithin(agent, 5000);
  return finish("SIGKILL");
}

// The same ladder without the exit keys, for a process group uuldana cannot wait on the usual way: its agent when
// uuldana itself crashes, and an agent left running by a uuldana that is gone. HUP, TERM, then KILL to the whole
// group, each given stepMs to end it. Synchronous and bounded (at most about three steps), so a crash handler
// finishes it before the process exits; it spawns nothing that could outlive uuldana.
export function stopGroupNow(pid: number, stepMs: number): Exclude<StopStep, "keys" | "SIGINT"> {
  if (!groupRunning(pid)) return "exited";
  for (const signal of ["SIGHUP", "SIGTERM"] as const) {
    signalGroup(pid, signal);
    if (waitGroupGone(pid, stepMs)) return signal;
  }
  signalGroup(pid, "SIGKILL");
  waitGroupGone(pid, stepMs);
  return "SIGKILL";
}

// --- internal ---

function waitGroupGone(pid: number, ms: number): boolean {
  const deadline = Date.now() + ms;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (groupRunning(pid)) {
    if (Date.now() >= deadline) return false;
    // a real pause of the thread, not a busy loop
    Atomics.wait(pause, 0, 0, 20);
  }
  return true;
}

function exitedWithin(agent: AgentPty, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void agent.exited.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
