import type { Journal } from "./journal.js";

// The run's last drawn lines, kept in drawn-N.txt: saved at each candidate, its outcome and the run's end, and
// between those once lines drawn meanwhile have waited SAVE_MS, so a report written while the session runs has them.

const SAVE_MS = 5000;

export class DrawnFile {
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly journal: Journal,
    readonly name: string,
    private readonly lines: () => string[],
  ) {}

  // Saves now.
  save(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const lines = this.lines();
    this.journal.save(this.name, lines.length ? lines.join("\n") + "\n" : "");
  }

  // Lines were drawn: saved once the timer is due.
  soon(): void {
    if (this.closed) return;
    this.timer ??= setTimeout(() => {
      try {
        this.save();
      } catch {
        // a disk that cannot take it now: the save at the next candidate, turn or the run's end says so
      }
    }, SAVE_MS).unref();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }
}
