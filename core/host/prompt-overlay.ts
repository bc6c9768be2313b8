import type { AgentPty } from "../terminal/pty.js";
import type { Screen } from "../terminal/screen.js";
import type { AgentOutput } from "./agent-output.js";
import { askRedraw } from "./agent-redraw.js";
import { CommandPrompt, type PromptContext, type PromptQuestion } from "./command-prompt.js";

// The command key as named and as the terminal sends it (see commandKeyBytes).
export interface CommandKey {
  name: string;
  byte: number;
  kitty: string;
}

// uuldana's own prompt over the agent's screen, opened with the command key: the agent's output waits while it is
// open (on the alternate screen, unless the agent is there already), and the agent redraws itself when it closes.
export class PromptOverlay {
  private prompt: CommandPrompt | undefined;
  private ownsAltScreen = false;
  // the answer a question open in the prompt waits for
  private answer: ((choice: string | undefined) => void) | undefined;

  constructor(
    private readonly parts: {
      stdout: NodeJS.WriteStream;
      screen: Screen;
      agent: AgentPty;
      output: AgentOutput;
      context: PromptContext;
      key: CommandKey;
      // the agent's process has ended: it has no screen to redraw and takes no key
      gone: () => boolean;
      // the command key typed twice: the key for the agent
      sendKey: (key: Buffer) => void;
    },
  ) {}

  get isOpen(): boolean {
    return this.prompt !== undefined;
  }

  // Opens the prompt; what was typed after the command key in the same read is its first input.
  open(rest: Buffer): void {
    const { stdout, screen, output, context, key } = this.parts;
    this.prompt = new CommandPrompt((text) => stdout.write(text), context, key, () => screen.cols);
    output.hold();
    this.ownsAltScreen = !screen.modes.altScreen;
    if (this.ownsAltScreen) stdout.write("\x1b[?1049h");
    this.prompt.open();
    if (rest.length) this.input(rest);
  }

  // Puts a question to the user in the prompt, opened for it; resolves with the key of the choice made, or undefined
  // when none is made within timeoutMs (or the prompt is closed without one: Esc).
  ask(question: PromptQuestion, timeoutMs: number): Promise<string | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.answered(undefined), timeoutMs);
      this.answer = (choice): void => {
        clearTimeout(timer);
        resolve(choice);
      };
      if (!this.prompt) this.open(Buffer.alloc(0));
      this.prompt!.ask(question);
    });
  }

  // One read of the user's keys while the prompt is open.
  input(data: Buffer): void {
    if (this.answer) {
      const choice = this.prompt!.choice(data);
      if (choice !== undefined || data.toString("utf8") === "\x1b" || data.toString("utf8") === "\x03") this.answered(choice);
      return;
    }
    const outcome = this.prompt!.input(data);
    if (outcome === "close") this.close();
    else if (outcome === "send-key") this.close(data);
  }

  // Closes the prompt and gives the screen back to the agent, with the key for it if the user sent one.
  close(sendKey?: Buffer): void {
    // a question still open is left unanswered
    if (this.answer) return this.answered(undefined);
    if (!this.prompt) return;
    const { stdout, screen, agent, output, gone } = this.parts;
    this.prompt = undefined;
    if (this.ownsAltScreen) stdout.write("\x1b[?1049l");
    if (screen.modes.cursorHidden) stdout.write("\x1b[?25l");
    output.release();
    if (gone()) return;
    if (!this.ownsAltScreen) askRedraw(agent, screen, gone);
    if (sendKey) this.parts.sendKey(sendKey);
  }

  // The question is answered (or not): the prompt closes, and the asker hears the choice.
  private answered(choice: string | undefined): void {
    const answer = this.answer;
    this.answer = undefined;
    this.close();
    answer?.(choice);
  }
}
