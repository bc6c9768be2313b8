// The lines the user submitted to the agent, as the keys they typed tell them: text up to Enter, with what a paste
// brought in kept whole (its line breaks are part of the turn, not a submit) and every other key sequence (arrows,
// function keys, focus reports) left out.

const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";
// one escape sequence: a CSI with its parameters and final byte, an SS3 key, or an escape and one character
const SEQUENCE = /^\x1b(?:\[[0-?]*[ -/]*[@-~]|O[@-~]|[\s\S])?/;
const INCOMPLETE = /^\x1b(?:\[[0-?]*[ -/]*|O)$/;

export class TypedTurns {
  readonly turns: string[] = [];
  private typing = "";
  private pasting = false;
  // a sequence split across two reads: its beginning waits for the rest
  private pending = "";

  constructor(private readonly onTurn: (text: string) => void = () => {}) {}

  // The keys of one read of the user's input.
  add(keys: string): void {
    const text = this.pending + keys;
    this.pending = "";
    let at = 0;
    while (at < text.length) {
      if (text[at] === "\x1b") {
        const rest = text.slice(at, at + 64);
        // a sequence the read cut before its final byte waits for the rest
        if (INCOMPLETE.test(rest)) {
          this.pending = rest;
          return;
        }
        const sequence = SEQUENCE.exec(rest)![0];
        if (sequence === PASTE_START) this.pasting = true;
        else if (sequence === PASTE_END) this.pasting = false;
        at += sequence.length;
        continue;
      }
      const char = text[at++]!;
      if (char === "\r" || char === "\n") {
        if (this.pasting) this.typing += "\n";
        else this.submit();
      } else if (char === "\x7f" || char === "\b") this.typing = this.typing.slice(0, -1);
      // Ctrl+U and Ctrl+C empty the input line in the agents' prompts
      else if (char === "\x15" || char === "\x03") this.typing = "";
      else if (char >= " ") this.typing += char;
    }
  }

  // True when nothing is half typed: the user's input line is empty and no paste is under way.
  get idle(): boolean {
    return this.typing === "" && !this.pasting && this.pending === "";
  }

  private submit(): void {
    const turn = this.typing.trim();
    this.typing = "";
    if (!turn) return;
    this.turns.push(turn);
    this.onTurn(turn);
  }
}
