import { parseKeyStep } from "./keys.js";
import type { AgentPty } from "./pty.js";
import { sleep } from "./time.js";
import type { Manifest } from "./types.js";

// Which step of the graceful stop ended the agent.
export type StopStep = "exited" | "keys" | "SIGINT" | "SIGHUP" | "SIGTERM" | "SIGKILL";

export interface StopResult {
  step: StopStep;
  durationMs: number;
}

const STEP_GAP_MS = 80;
const PAUSE_MS = 400;

// Stops an agent as its manifest says: type the exit keys (each step a separate write, so text and Enter are not
// taken for one paste), wait, then signal its process group in turn, then KILL. Nothing of the group is left.
export async function stopAgent(agent: AgentPty, exit: Manifest["exit"] = {}, options: { keys?: boolean } = {}): Promise<StopResult> {
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
    for (const raw of exit.keys) {
      if (done) break;
      const step = parseKeyStep(raw);
      if (!step) continue;
      if (step.kind === "key" && step.name === "pause") await sleep(PAUSE_MS);
      else agent.write(step.kind === "text" ? step.text : step.bytes);
      await sleep(STEP_GAP_MS);
    }
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

// --- internal ---

function exitedWithin(agent: AgentPty, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void agent.exited.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
