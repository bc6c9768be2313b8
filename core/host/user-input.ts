import { StringDecoder } from "node:string_decoder";

import type { AgentPty } from "../terminal/pty.js";
import type { CommandKey, PromptOverlay } from "./prompt-overlay.js";
import type { RunDetection } from "./run-detection.js";
import { TerminalReads, type InputPiece } from "./terminal-replies.js";
import { TypedTurns } from "./typed-turns.js";

// The user's terminal on its way to the agent. A reply of the terminal's goes to the agent untouched, whatever else
// is going on, and counts as no key. The command key opens uuldana's prompt, which takes the keys while it is open;
// every other key goes to the agent, or is held back once uuldana has begun to stop it. What uuldana notes of the
// keys (the lines submitted, that a key was typed) comes after they are passed on.
export class UserInput {
  readonly turns: TypedTurns;
  // whether the user typed anything at all (a terminal's reply is not typing)
  typed = false;
  private readonly reads = new TerminalReads();
  private readonly decoder = new StringDecoder("utf8");
  private holding = false;

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
    return !this.parts.overlay.isOpen && this.turns.empty && this.reads.idle;
  }

  // The line left half typed while keys were held ('' if none, or if none were held).
  get heldPartial(): string {
    return this.holding ? this.turns.partial : "";
  }

  // uuldana has begun to stop the agent: from now on the user's keys are held back from it, their lines kept apart.
  hold(): void {
    this.holding = true;
    this.turns.hold();
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

  // Keys for the agent from elsewhere (the command key typed twice), held back as typed keys are.
  send(keys: Buffer): void {
    if (!this.holding) this.parts.agent.write(keys);
  }

  // One read of the user's terminal: up to the command key, if it holds one, a reply for the agent, keys for
  // uuldana's prompt while it is open, or keys for the agent; what follows the command key opens the prompt.
  read(data: Buffer): void {
    const { agent, overlay } = this.parts;
    const found = this.parts.interactive && !overlay.isOpen ? findCommandKey(data, this.parts.key) : undefined;
    const before = found ? data.subarray(0, found.at) : data;
    const text = this.decoder.write(before);
    const scanned = this.reads.scan(text);
    if (scanned.reply) agent.write(before);
    else if (overlay.isOpen) {
      this.typed = true;
      overlay.input(data);
    } else this.type(before, text, scanned.pieces);
    if (found) overlay.open(data.subarray(found.at + found.length));
  }

  // Keys for the agent: passed on (or held back), then noted.
  private type(data: Buffer, text: string, pieces: InputPiece[]): void {
    this.typed = true;
    if (!this.holding && data.length) this.parts.agent.write(data);
    this.turns.add(pieces);
    if (this.holding) return;
    this.parts.detection.noteInput(text.replace(/[\x00-\x1f\x7f]/g, " "));
    this.parts.onKey?.();
  }
}

// Where the command key is in a read, in its classic form or as the kitty keyboard protocol sends it.
function findCommandKey(data: Buffer, key: CommandKey): { at: number; length: number } | undefined {
  const at = data.indexOf(key.byte);
  if (at !== -1) return { at, length: 1 };
  const kitty = data.indexOf(key.kitty);
  return kitty === -1 ? undefined : { at: kitty, length: key.kitty.length };
}
