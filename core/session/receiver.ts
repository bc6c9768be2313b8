import type { Gate } from "../registry/gate.js";
import { compact } from "./conversation.js";

// Whether the agent a handoff started really took the conversation: a start counts only once the agent shows the
// prompt as its turn, works on it, records it in its transcript or reports quota numbers after answering. Looked at
// when the agent draws (a look at most every LOOK_MS) and once more at the deadline or its exit; nothing polls.

// What the receiver's run can tell about itself.
export interface ReceiverSigns {
  // its screen: the visible rows, and the whole conversation (scrollback and screen)
  screen(): Promise<{ visible: readonly string[]; conversation: string }>;
  // the agent shows that it works on a turn
  busy(visible: readonly string[]): boolean;
  // its own transcript records the handed-on turn
  transcriptTurn(): boolean;
  // its screen asks to sign in, or asks the user a question before it works (its manifest's lines)
  gate?(visible: readonly string[]): Gate | undefined;
}

export type ReceiverSign = "screen" | "working" | "transcript" | "quota";

// How the wait for the receiver ended: it took the prompt (and by what sign, how long after its start), or it did
// not, and why, with the last lines its screen showed.
// A receiver at a sign-in screen is left there at once (signIn: the line that asked).
export type ReceiverOutcome = { took: true; by: ReceiverSign; afterMs: number } | { took: false; reason: string; lines: string[]; signIn?: string };

export interface ReceiverOptions {
  seconds: number;
  prompt: string;
  signs: ReceiverSigns;
  // told once, when the receiver took the prompt or when its time ran out
  decided: (outcome: ReceiverOutcome) => void;
  // told when its screen asks the user a question first (the wait goes on, for the user)
  asking?: (line: string) => void;
  // what the user runs to sign the agent in, for the reason a sign-in screen gives
  signInCommand?: string;
  clock?: () => number;
}

// How often the screen is looked at for a sign, at most, while the agent draws.
const LOOK_MS = 150;
// How many letters of the prompt's first line must be on the screen for it to count as shown.
const SHOWN_LETTERS = 40;
// How many of the screen's last lines a failed receiver is described by.
const LAST_LINES = 6;

export class ReceiverWatch {
  private readonly clock: () => number;
  private readonly started: number;
  private deadline: NodeJS.Timeout | undefined;
  private lookedAt = 0;
  private later: NodeJS.Timeout | undefined;
  private looking = false;
  private outcome: ReceiverOutcome | undefined;
  // the question its screen last asked the user, told once
  private asked: string | undefined;

  constructor(private readonly options: ReceiverOptions) {
    this.clock = options.clock ?? Date.now;
    this.started = this.clock();
    this.arm();
  }

  // The receiver's outcome once decided.
  get decided(): ReceiverOutcome | undefined {
    return this.outcome;
  }

  // The agent drew something: a look for a sign, now or when the last look is old enough.
  drawn(): void {
    if (this.outcome || this.later) return;
    const wait = this.lookedAt + LOOK_MS - this.clock();
    if (wait <= 0) void this.look();
    else this.later = setTimeout(() => void this.look(), wait).unref();
  }

  // The user typed to the agent (signing in, answering its trust question): the time starts again from now.
  typed(): void {
    if (!this.outcome) this.arm();
  }

  // A sign from outside the screen: the agent's quota numbers came after an answer.
  sign(by: ReceiverSign): void {
    this.decide({ took: true, by, afterMs: this.clock() - this.started });
  }

  // The agent exited: a last look at what it left on the screen, else it exited before taking the prompt.
  async exited(how: string): Promise<ReceiverOutcome> {
    if (!this.outcome && !(await this.look())) {
      this.decide({ took: false, reason: `it ${how} before it took the conversation`, lines: await this.lastLines() });
    }
    return this.outcome!;
  }

  close(): void {
    clearTimeout(this.deadline);
    clearTimeout(this.later);
  }

  // --- internal ---

  private arm(): void {
    clearTimeout(this.deadline);
    this.deadline = setTimeout(() => void this.timeUp(), this.options.seconds * 1000).unref();
  }

  private async timeUp(): Promise<void> {
    if (this.outcome || (await this.look())) return;
    const seconds = this.options.seconds;
    this.decide({ took: false, reason: `it did not take the conversation within ${seconds} s`, lines: await this.lastLines() });
  }

  // Looks for a sign; true when one was found (now or before).
  private async look(): Promise<boolean> {
    clearTimeout(this.later);
    this.later = undefined;
    if (this.outcome) return this.outcome.took;
    if (this.looking) return false;
    this.looking = true;
    this.lookedAt = this.clock();
    try {
      const { visible, conversation } = await this.options.signs.screen();
      // decided meanwhile (a sign from outside the screen)
      const decided = this.outcome as ReceiverOutcome | undefined;
      if (decided) return decided.took;
      const gate = this.options.signs.gate?.(visible);
      if (gate?.kind === "sign-in") {
        const run = this.options.signInCommand ? `: run "${this.options.signInCommand}"` : "";
        this.decide({ took: false, reason: `it asks to sign in${run}`, lines: lastOf(visible), signIn: gate.line });
        return false;
      }
      if (gate?.kind === "question" && this.asked !== gate.line) {
        this.asked = gate.line;
        this.options.asking?.(gate.line);
      }
      const by: ReceiverSign | undefined = this.options.signs.busy(visible)
        ? "working"
        : promptShown(this.options.prompt, conversation)
          ? "screen"
          : this.options.signs.transcriptTurn()
            ? "transcript"
            : undefined;
      if (by) this.decide({ took: true, by, afterMs: this.clock() - this.started });
      return by !== undefined;
    } catch {
      // a screen that cannot be read now (the run ending) is looked at again at the deadline or the exit
      return false;
    } finally {
      this.looking = false;
    }
  }

  private async lastLines(): Promise<string[]> {
    try {
      return lastOf((await this.options.signs.screen()).visible);
    } catch {
      return [];
    }
  }

  private decide(outcome: ReceiverOutcome): void {
    if (this.outcome) return;
    this.outcome = outcome;
    this.close();
    this.options.decided(outcome);
  }
}

// The screen's last lines that hold anything, for a receiver that did not take over.
function lastOf(visible: readonly string[]): string[] {
  return visible.map((line) => line.trimEnd()).filter((line) => line.trim()).slice(-LAST_LINES);
}

// Whether the agent's screen shows the prompt as a turn: the first letters of its first line, however the agent
// wrapped, indented or framed them (only letters and digits are compared).
export function promptShown(prompt: string, screenText: string): boolean {
  const firstLine = prompt.split("\n").find((line) => compact(line).length > 0) ?? "";
  const piece = compact(firstLine).slice(0, SHOWN_LETTERS);
  return piece.length > 0 && compact(screenText).includes(piece);
}
