import type { Gate } from "../registry/gate.js";

// How often the screen is looked at for a gate, at most, while the agent draws.
const LOOK_MS = 150;

// Looks at a running agent's visible rows for a gate (a sign-in screen, a question) as it draws, at most every LOOK_MS
// and once more after the last batch; tells what it saw each time it looked.
export class GateWatch {
  private lookedAt = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly gate: (visible: readonly string[]) => Gate | undefined,
    private readonly visible: () => readonly string[],
    private readonly seen: (gate: Gate | undefined) => void,
  ) {}

  // The agent drew: a look now, or when the last one is old enough.
  look(): void {
    if (this.timer) return;
    const wait = this.lookedAt + LOOK_MS - Date.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.look();
      }, wait).unref();
      return;
    }
    this.lookedAt = Date.now();
    this.seen(this.gate(this.visible()));
  }

  close(): void {
    clearTimeout(this.timer);
  }
}
