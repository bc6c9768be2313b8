import type { InputPiece } from "./terminal-replies.js";

// The lines the user submitted to the agent, as the keys they typed tell them: text up to Enter, with what a paste
// brought in kept whole (its line breaks are part of the turn, not a submit). Key sequences are left out, and the
// terminal's replies never come here (TerminalReads tells them from keys).
export class TypedTurns {
  readonly turns: string[] = [];
  // the lines submitted while uuldana held the keys back (it was stopping the agent): no agent has them
  readonly held: string[] = [];
  private typing = "";
  private holding = false;

  constructor(private readonly onTurn: (text: string) => void = () => {}) {}

  // The keys of one read that is no reply.
  add(pieces: readonly InputPiece[]): void {
    for (const piece of pieces) if (piece.kind === "text") this.type(piece.text, piece.pasted);
  }

  // From now on the lines submitted are held ones: kept in `held`, not told to onTurn.
  hold(): void {
    this.holding = true;
  }

  // The line typed and not yet submitted, printable text only ('' if none).
  get partial(): string {
    return this.typing.trim();
  }

  // True when the user's input line is empty.
  get empty(): boolean {
    return this.typing === "";
  }

  private type(text: string, pasted: boolean): void {
    for (const char of text) {
      if (char === "\r" || char === "\n") {
        if (pasted) this.typing += "\n";
        else this.submit();
      } else if (char === "\x7f" || char === "\b") this.typing = this.typing.slice(0, -1);
      // Ctrl+U and Ctrl+C empty the input line in the agents' prompts
      else if (char === "\x15" || char === "\x03") this.typing = "";
      // C0 and C1 controls are no text
      else if (char >= " " && (char < "\x80" || char > "\x9f")) this.typing += char;
    }
  }

  private submit(): void {
    const turn = this.typing.trim();
    this.typing = "";
    if (!turn) return;
    if (this.holding) this.held.push(turn);
    else {
      this.turns.push(turn);
      this.onTurn(turn);
    }
  }
}
