import { createRequire } from "node:module";

// The user's terminal in tests: a real pseudo-terminal held by the test, rendered by a headless xterm.
const require = createRequire(import.meta.url);
const pty = require("node-pty") as typeof import("node-pty");
const { Terminal } = require("@xterm/headless") as typeof import("@xterm/headless");

export class TestTerminal {
  readonly term: InstanceType<typeof Terminal>;
  readonly child: import("node-pty").IPty;
  readonly exited: Promise<{ exitCode: number; signal?: number }>;
  raw = "";
  title = "";

  constructor(file: string, args: string[], options: { cwd: string; env: Record<string, string>; cols?: number; rows?: number }) {
    const cols = options.cols ?? 100;
    const rows = options.rows ?? 30;
    this.term = new Terminal({ cols, rows, allowProposedApi: true, scrollback: 1000 });
    this.term.onTitleChange((title) => (this.title = title));
    // the terminal's name is its TERM: a test may give another one in env
    const name = options.env.TERM ?? "xterm-256color";
    this.child = pty.spawn(file, args, { name, cols, rows, cwd: options.cwd, env: { ...options.env, TERM: name } });
    this.child.onData((data) => {
      this.raw += data;
      this.term.write(data);
    });
    // a real terminal answers queries such as the cursor position
    this.term.onData((reply) => this.child.write(reply));
    this.exited = new Promise((resolve) => this.child.onExit(resolve));
  }

  async settle(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 30));
    await new Promise<void>((resolve) => this.term.write("", resolve));
  }

  // The visible screen, one string per row without trailing blanks, trailing empty rows dropped.
  screen(): string[] {
    const buffer = this.term.buffer.active;
    const lines: string[] = [];
    for (let y = 0; y < this.term.rows; y++) lines.push((buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? "").trimEnd());
    while (lines.length && lines[lines.length - 1] === "") lines.pop();
    return lines;
  }

  // Everything the terminal shows and has scrolled away, one string per row without trailing blanks.
  text(): string {
    const buffer = this.term.buffer.active;
    const lines: string[] = [];
    for (let y = 0; y < buffer.length; y++) lines.push((buffer.getLine(y)?.translateToString(true) ?? "").trimEnd());
    return lines.join("\n").trimEnd();
  }

  async waitFor(pattern: RegExp | string, timeoutMs = 20_000): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await this.settle();
      const lines = this.screen();
      const text = lines.join("\n");
      if (typeof pattern === "string" ? text.includes(pattern) : pattern.test(text)) return lines;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(pattern)}; screen:\n${text}`);
    }
  }

  type(text: string): void {
    this.child.write(text);
  }

  resize(cols: number, rows: number): void {
    this.term.resize(cols, rows);
    this.child.resize(cols, rows);
  }

  kill(): void {
    try {
      process.kill(-this.child.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}
