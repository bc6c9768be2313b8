import { Detector, type DetectorEvent } from "../reader/detector.js";
import type { Verdict } from "../reader/reader.js";
import type { Screen } from "../terminal/screen.js";
import { DrawnLines, type DrawnAround } from "./drawn-lines.js";

// How a run's screen is read for a gone allowance (HostOptions.detect and its callbacks).
export interface DetectionOptions {
  detect?: {
    quietSeconds: number;
    dismissSeconds: number;
    classify: (text: string) => Verdict;
    busy?: (screen: readonly string[]) => boolean;
  };
  firstPrompt?: string;
  onDetection?: (event: DetectorEvent, drawn: DrawnAround) => void;
  redactLines?: (lines: readonly string[]) => string[];
  onDrawn?: (lines: readonly string[]) => void;
}

// The detector wired to one run: each batch the screen model draws goes to it with the lines around it kept, its
// deadlines are looked at when they come, and each event is told with the lines drawn around its candidate.
export class RunDetection {
  // what the detector decided (the stop, or the last ignored limit-like text), if anything
  event: DetectorEvent | undefined;
  readonly drawn: DrawnLines;
  private readonly detector: Detector | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(
    private readonly screen: Screen,
    private readonly options: DetectionOptions,
  ) {
    this.drawn = new DrawnLines(options.redactLines);
    const detect = options.detect;
    if (!detect) return;
    this.detector = new Detector({ quietMs: detect.quietSeconds * 1000, dismissMs: detect.dismissSeconds * 1000, classify: detect.classify, busy: detect.busy });
    if (options.firstPrompt) this.detector.notePrompt(options.firstPrompt);
    screen.onDrawn((batch) => {
      this.drawn.add(batch.lines);
      this.told(this.detector!.observe(batch, Date.now()), batch.lines.length);
      options.onDrawn?.(batch.lines);
    });
  }

  // What the user typed to the agent: its echo on the screen is not the agent's own text.
  noteInput(text: string): void {
    this.detector?.noteInput(text);
  }

  // After a stop the session left to the agent: its screen is read on for a new limit message.
  reopen(): void {
    this.detector?.reopen();
  }

  // The agent exited (with this code, 128 + a signal's number when killed): the detector's last events, and no more looks.
  exit(code: number): void {
    this.end();
    if (!this.detector) return;
    for (const event of this.detector.exit(code, Date.now())) {
      this.event = event;
      this.options.onDetection?.(event, this.around(event, 0));
    }
  }

  // No more looks at deadlines.
  end(): void {
    this.ended = true;
    clearTimeout(this.timer);
  }

  // the lines each event is told with: a candidate's are found in the batch it came in (batchSize lines)
  private around(event: DetectorEvent, batchSize: number): DrawnAround {
    return event.type === "candidate" ? this.drawn.candidate(event.text, batchSize) : this.drawn.outcome();
  }

  private told(events: DetectorEvent[], batchSize: number): void {
    for (const event of events) {
      if (event.type !== "candidate") this.event = event;
      this.options.onDetection?.(event, this.around(event, batchSize));
    }
    clearTimeout(this.timer);
    const deadline = this.detector?.nextDeadline();
    if (deadline !== undefined && !this.ended) this.timer = setTimeout(() => this.atDeadline(), Math.max(0, deadline - Date.now()));
  }

  // at a deadline: a quiet stop waits for the visible rows when the provider's busy test is to see them
  private atDeadline(): void {
    const detector = this.detector!;
    // one clock reading for both: a millisecond between them could pass the quiet deadline after the question of
    // whether the busy test must see the screen was answered no
    const now = Date.now();
    if (!detector.needsScreen(now)) return this.told(detector.tick(now), 0);
    void this.screen.read().then(({ visible }) => {
      if (!this.ended) this.told(detector.tick(Date.now(), visible), 0);
    });
  }
}
