import { escapeControls } from "../base/safe-text.js";

// uuldana's own prompt, opened with the command key in place of the agent's screen.
export interface PromptContext {
  header(): string[];
  status(): string[];
  // "/agent …": the priority list, and changes to it
  agent?: (args: string) => string[];
}

export type PromptOutcome = "open" | "close" | "send-key";

// A question uuldana puts to the user (an agent's offer of paid usage): its lines, and the keys that answer it.
export interface PromptQuestion {
  lines: string[];
  choices: { key: string; label: string }[];
}

// each command of the prompt and what /help says it does
const COMMANDS: readonly [string, string][] = [
  ["/status", "what runs now, and the session's state"],
  ["/agent", "the priority list, and how to change it"],
  ["/help", "this list"],
  ["/close", "back to the agent (so do Esc, and Enter on an empty line)"],
];
const NAMES = COMMANDS.map(([name]) => name).join(", ");

export class CommandPrompt {
  private line = "";
  private message: string[] = [];
  private question: PromptQuestion | undefined;

  constructor(
    private readonly write: (text: string) => void,
    private readonly context: PromptContext,
    private readonly key: { byte: number; kitty: string; name: string },
    private readonly width: () => number,
  ) {}

  open(): void {
    this.line = "";
    this.message = [`Commands: ${NAMES}; Esc or Enter closes.`, `${this.key.name} again sends ${this.key.name} to the agent.`];
    this.draw();
  }

  // Puts a question: its lines and choices take the prompt's place until it is answered.
  ask(question: PromptQuestion): void {
    this.question = question;
    this.line = "";
    this.message = [...question.lines, "", ...question.choices.map((choice) => `${choice.key}  ${choice.label}`), "", `Type ${question.choices.map((choice) => choice.key).join(" or ")}.`];
    this.draw();
  }

  // The choice a key typed while a question is open makes, if it makes one.
  choice(data: Buffer): string | undefined {
    const typed = data.toString("utf8").trim();
    return this.question?.choices.find((choice) => choice.key === typed)?.key;
  }

  // Handles typed bytes; says whether the prompt stays open, closes, or closes and sends the key to the agent.
  input(data: Buffer): PromptOutcome {
    const text = data.toString("utf8");
    if (text === "\x1b" || text === "\x03") return "close";
    if (text === this.key.kitty || (data.length === 1 && data[0] === this.key.byte)) return "send-key";
    if (text.startsWith("\x1b")) return "open";
    for (const char of text) {
      if (char === "\r" || char === "\n") {
        const outcome = this.submit();
        if (outcome !== "open") return outcome;
      } else if (char === "\x7f" || char === "\b") {
        this.line = [...this.line].slice(0, -1).join("");
      } else if (char >= " ") {
        this.line += char;
      }
    }
    this.draw();
    return "open";
  }

  // --- internal ---

  private submit(): PromptOutcome {
    const command = this.line.trim();
    this.line = "";
    if (command === "" || command === "/close") return "close";
    if (command === "/status") this.message = this.context.status();
    else if ((command === "/agent" || command.startsWith("/agent ")) && this.context.agent) this.message = this.context.agent(command.slice(6).trim());
    else if (command === "/help") this.message = this.help();
    else this.message = [`unknown command "${command}"; commands: ${NAMES}`];
    return "open";
  }

  // one line per command, and what the command key does here
  private help(): string[] {
    const width = Math.max(...COMMANDS.map(([name]) => name.length));
    const lines = COMMANDS.filter(([name]) => name !== "/agent" || this.context.agent).map(([name, what]) => `${name.padEnd(width)}  ${what}`);
    return [...lines, `${this.key.name} again sends ${this.key.name} to the agent.`];
  }

  private draw(): void {
    // each line fits the terminal, so the prompt never scrolls what it drew
    const cols = Math.max(20, this.width());
    const fit = (line: string): string => ([...line].length > cols ? `${[...line].slice(0, cols - 1).join("")}…` : line);
    // its lines quote the agent's title, its command line, notices and what was typed: none may carry a control
    const lines = [...this.context.header(), "", ...this.message, ""].map((line) => fit(escapeControls(line)));
    this.write(`\x1b[H\x1b[2J\x1b[?25h${lines.join("\r\n")}\r\nuuldana> ${escapeControls(this.line)}`);
  }
}
