import type { AgentPty } from "../terminal/pty.js";
import type { PromptOverlay, CommandKey } from "./prompt-overlay.js";
import type { RunDetection } from "./run-detection.js";
import { TypedTurns } from "./typed-turns.js";

// The user's keys on their way to the agent: the command key opens uuldana's prompt, which takes the keys while it is
// open; every other key goes to the agent, and what uuldana notes of them (the lines submitted, that a key was
// typed) comes after.
export class UserInput {
  readonly turns: TypedTurns;
  // whether the user typed anything at all
  typed = false;

  constructor(
    private readonly parts: {
      agent: AgentPty;
      overlay: PromptOverlay;
      detection: RunDetection;
      // the command key is looked for only in a real terminal's input
      interactive: boolean;
      key: CommandKey;
      onKey?: () => void;
      onUserTurn?: (text: string) => void;
    },
  ) {
    this.turns = new TypedTurns(parts.onUserTurn);
  }

  // True when nothing is half typed: uuldana's prompt is closed and the user's input line is empty.
  get idle(): boolean {
    return !this.parts.overlay.isOpen && this.turns.idle;
  }

  // Reads the user's terminal until the returned call.
  listen(stdin: NodeJS.ReadStream): () => void {
    const read = (data: Buffer): void => this.read(data);
    stdin.on("data", read);
    stdin.resume();
    return () => {
      stdin.off("data", read);
      stdin.pause();
    };
  }

  // One read of the user's terminal.
  read(data: Buffer): void {
    const { agent, overlay } = this.parts;
    const toAgent = !overlay.isOpen;
    if (overlay.isOpen) overlay.input(data);
    else if (!this.parts.interactive) agent.write(data);
    else this.passOrOpen(data);
    this.typed = true;
    const text = data.toString("utf8");
    this.parts.detection.noteInput(text.replace(/[\x00-\x1f\x7f]/g, " "));
    if (toAgent) {
      this.turns.add(text);
      this.parts.onKey?.();
    }
  }

  // The keys go to the agent up to the command key, if there is one; what follows it opens uuldana's prompt.
  private passOrOpen(data: Buffer): void {
    const found = findCommandKey(data, this.parts.key);
    if (!found) return this.parts.agent.write(data);
    if (found.at > 0) this.parts.agent.write(data.subarray(0, found.at));
    this.parts.overlay.open(data.subarray(found.at + found.length));
  }
}

// Where the command key is in a read, in its classic form or as the kitty keyboard protocol sends it.
function findCommandKey(data: Buffer, key: CommandKey): { at: number; length: number } | undefined {
  const at = data.indexOf(key.byte);
  if (at !== -1) return { at, length: 1 };
  const kitty = data.indexOf(key.kitty);
  return kitty === -1 ? undefined : { at: kitty, length: key.kitty.length };
}
