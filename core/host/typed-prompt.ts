import type { AgentPty } from "../terminal/pty.js";
import type { Screen } from "../terminal/screen.js";
import { sleep } from "../base/time.js";

export interface TypedPromptResult {
  ok: boolean;
  retriedEnter: boolean;
  reason?: string;
}

// Types a first prompt into a CLI that cannot take one on its command line: waits for its ready text, pastes the
// text (bracketed when the agent asked for it), sends Enter on its own, and sends it once more if nothing changed.
export async function typePrompt(
  agent: AgentPty,
  screen: Screen,
  text: string,
  ready: (screen: readonly string[]) => boolean,
  options: { timeoutMs?: number; isDone?: () => boolean } = {},
): Promise<TypedPromptResult> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    if (ready((await screen.read()).visible)) break;
    if (options.isDone?.()) return { ok: false, retriedEnter: false, reason: "the agent exited before it was ready" };
    if (Date.now() > deadline) return { ok: false, retriedEnter: false, reason: "the agent never showed that it was ready" };
    await sleep(50);
  }
  const clean = text.replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, "");
  if (screen.modes.bracketedPaste) agent.write(`\x1b[200~${clean.replace(/\n/g, "\r")}\x1b[201~`);
  else agent.write(clean.replace(/\s*\n\s*/g, " "));
  await sleep(200);
  const before = (await screen.read()).visible.join("\n");
  agent.write("\r");
  if (await changedWithin(screen, before, 1500)) return { ok: true, retriedEnter: false };
  agent.write("\r");
  if (await changedWithin(screen, before, 1500)) return { ok: true, retriedEnter: true };
  return { ok: false, retriedEnter: true, reason: "the screen did not change after Enter" };
}

// --- internal ---

async function changedWithin(screen: Screen, before: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    await sleep(50);
    if ((await screen.read()).visible.join("\n") !== before) return true;
  }
  return false;
}
