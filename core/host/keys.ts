import { sleep } from "../base/time.js";

// Named keys a manifest may write in braces among the keys to type, and the bytes they send.
const NAMED_KEYS: Record<string, string> = {
  enter: "\r",
  escape: "\x1b",
  tab: "\t",
  "ctrl-c": "\x03",
  "ctrl-d": "\x04",
  pause: "",
};

export type KeyStep = { kind: "text"; text: string } | { kind: "key"; name: string; bytes: string };

export function keyNames(): string[] {
  return Object.keys(NAMED_KEYS);
}

// Reads one step of a manifest's key list: "{enter}" is a key, anything else is text; undefined for an unknown key.
export function parseKeyStep(step: string): KeyStep | undefined {
  const named = /^\{([^{}]+)\}$/.exec(step);
  if (!named) return { kind: "text", text: step };
  const bytes = NAMED_KEYS[named[1]!];
  return bytes === undefined ? undefined : { kind: "key", name: named[1]!, bytes };
}

// How long apart the steps of a key list are typed, and how long {pause} waits.
const STEP_GAP_MS = 80;
const PAUSE_MS = 400;

// Types a manifest's key list into an agent, each step a separate write (so text and Enter are not taken for one
// paste); stops early once done() says the agent is gone. Unknown keys were refused when the manifest loaded.
export async function typeKeys(agent: { write(data: string): void }, steps: readonly string[], done: () => boolean): Promise<void> {
  for (const raw of steps) {
    if (done()) return;
    const step = parseKeyStep(raw);
    if (!step) continue;
    if (step.kind === "key" && step.name === "pause") await sleep(PAUSE_MS);
    else agent.write(step.kind === "text" ? step.text : step.bytes);
    await sleep(STEP_GAP_MS);
  }
}

// The bytes a terminal sends for the command key ("ctrl-]"): the classic control byte, and the form a terminal uses
// once an agent has turned on the kitty keyboard protocol.
export function commandKeyBytes(name: string): { byte: number; kitty: string } {
  const char = name.slice("ctrl-".length);
  const code = char.charCodeAt(0);
  const byte = /[a-z]/.test(char) ? code - 96 : code ^ 0x40;
  return { byte, kitty: `\x1b[${code};5u` };
}
