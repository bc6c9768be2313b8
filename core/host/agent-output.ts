import type { AgentPty } from "../terminal/pty.js";
import type { Screen } from "../terminal/screen.js";
import { titleSequence } from "../terminal/tty.js";
import { HELD_LIMIT } from "./output-thread-protocol.js";
import { OutputThread } from "./output-thread.js";
import { TitleFilter } from "./title.js";

// The agent's output on its way to the user's terminal and to the screen model: its titles carry uuldana's part
// first, and it waits while uuldana's prompt covers the screen. It notes when the agent last drew and whether its
// last line ended. Where uuldana reads the agent's terminal itself (AgentPty.own), an output thread passes the
// output through and this side sees it in batches for the screen model; else node-pty's events bring it here.
export class AgentOutput {
  readonly titles: TitleFilter;
  // whether the agent's last output ended its line: uuldana's own lines after the run begin on a line of their own
  endedLine = true;
  // when the agent last drew anything, for a turn boundary
  lastOutput = Date.now();
  private warned = false;
  // what uuldana waits on, shown after its part of the title ("waiting on its question")
  private titleNote: string | undefined;
  private held: Buffer[] | undefined;
  private heldBytes = 0;
  private readonly unsubscribe: () => void;
  private readonly thread: OutputThread | undefined;

  constructor(
    agent: AgentPty,
    private readonly screen: Screen,
    private readonly stdout: NodeJS.WriteStream,
    // "uuldana · entry · level"
    private readonly label: string,
  ) {
    this.titles = new TitleFilter((agentTitle) => this.title(agentTitle));
    if (agent.own) {
      const thread = new OutputThread(agent.own, (stdout as unknown as { fd: number }).fd, this.title(""), (chunk) => this.note(chunk), (data) => this.pass(data));
      this.thread = thread;
      this.unsubscribe = () => thread.stop();
    } else this.unsubscribe = agent.onData((chunk) => this.take(chunk));
  }

  // the title the agent last set
  get agentTitle(): string {
    return this.thread ? this.thread.agentTitle : this.titles.agentTitle;
  }

  // The title uuldana shows: its part first, the ⚠ mark in it, so an agent's own title can neither hide the mark nor fake it.
  title(agentTitle = this.agentTitle): string {
    return `${this.label}${this.warned ? " ⚠" : ""}${this.titleNote ? ` · ${this.titleNote}` : ""}${agentTitle ? ` · ${agentTitle}` : ""}`;
  }

  // Sets (or clears) the note in uuldana's part of the title; the sequence that shows it.
  noteTitle(note: string | undefined): string {
    this.titleNote = note;
    this.thread?.titlePrefix(this.title(""));
    return titleSequence(this.title());
  }

  // Marks (or unmarks) the title with ⚠; the sequence that shows it.
  warn(on: boolean): string {
    this.warned = on;
    this.thread?.titlePrefix(this.title(""));
    return titleSequence(this.title());
  }

  // Holds the output back (uuldana's prompt covers the screen) until release().
  hold(): void {
    this.held ??= [];
    this.thread?.hold();
  }

  // Writes what was held back and passes the output through again.
  release(): void {
    const pending = this.held;
    this.held = undefined;
    this.heldBytes = 0;
    if (pending?.length) this.stdout.write(Buffer.concat(pending));
    this.thread?.release();
  }

  // The agent's output has ended: no more is read, and a title cut short is dropped.
  end(): void {
    this.unsubscribe();
    this.titles.end();
  }

  // node-pty's events: the output passed through here, then noted
  private take(chunk: Buffer): void {
    const filtered = this.titles.filter(chunk);
    if (filtered.length) this.pass(filtered);
    this.note(chunk);
  }

  // What the agent wrote, for the screen model and the notes on its drawing.
  private note(chunk: Buffer): void {
    this.lastOutput = Date.now();
    if (chunk.length) this.endedLine = chunk[chunk.length - 1] === 0x0a;
    this.screen.queue(chunk);
  }

  private pass(data: Buffer): void {
    if (!this.held) {
      this.stdout.write(data);
      return;
    }
    if (this.heldBytes + data.length > HELD_LIMIT) return;
    this.held.push(Buffer.from(data));
    this.heldBytes += data.length;
  }
}
