import { Detector, type DetectorEvent } from "../reader/detector.js";
import type { Verdict } from "../reader/reader.js";
import { judgeSpeaker, type DrawnStyle, type NoticeStyle, type SpeakerFacts } from "../reader/speaker.js";
import type { Screen } from "../terminal/screen.js";
import { DrawnLines, type DrawnAround } from "./drawn-lines.js";

// How a run's screen is read for a gone allowance (HostOptions.detect and its callbacks).
export interface DetectionOptions {
  detect?: {
    quietSeconds: number;
    dismissSeconds: number;
    classify: (text: string) => Verdict;
    busy?: (screen: readonly string[]) => boolean;
    // how the agent draws its own notices (its manifest's notice_style)
    notice?: NoticeStyle;
    // the turn of the agent's own records a line stands in, where its adapter reads them
    record?: (line: string) => SpeakerFacts["record"];
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
    // who spoke a stop's first line: the agent's records, then how and where the screen drew it
    const speaker = (line: string, verdict: Verdict): Verdict => judgeSpeaker(verdict, { ...drawnFacts(screen, line), ...(detect.notice ? { notice: detect.notice } : {}), ...recordOf(detect.record, line) });
    this.detector = new Detector({ quietMs: detect.quietSeconds * 1000, dismissMs: detect.dismissSeconds * 1000, classify: detect.classify, busy: detect.busy, speaker });
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
    return event.type === "candidate" || event.type === "refused" ? this.drawn.candidate(event.text, batchSize) : this.drawn.outcome();
  }

  private told(events: DetectorEvent[], batchSize: number): void {
    for (const event of events) {
      if (event.type !== "candidate" && event.type !== "refused") this.event = event;
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

// How and where the screen drew a line (its last row showing it): the style most of its letters have, the glyph it
// begins with, and whether it sits in the conversation or under the agent's last frame line at the bottom (its own
// status and prompt area). Nothing when the line has left the screen.
function drawnFacts(screen: Screen, line: string): SpeakerFacts {
  const want = line.trim();
  const rows = screen.visible();
  const row = want ? rows.findLastIndex((text) => text.includes(want)) : -1;
  if (row < 0) return {};
  const weights = new Map<string, { style: DrawnStyle; letters: number }>();
  for (const run of screen.lineStyle(row)) {
    const letters = run.text.match(/[\p{L}\p{N}]/gu)?.length ?? 0;
    if (!letters) continue;
    const style: DrawnStyle = { fg: run.fg, bold: run.bold, dim: run.dim, inverse: run.inverse };
    const key = JSON.stringify(style);
    weights.set(key, { style, letters: (weights.get(key)?.letters ?? 0) + letters });
  }
  const drawn = [...weights.values()].sort((a, b) => b.letters - a.letters)[0]?.style;
  const glyph = /^\s*([^\p{L}\p{N}\s])/u.exec(rows[row]!)?.[1];
  const frame = rows.findLastIndex((text) => /^\s*[│|╭╰]?\s*[─━═]{8,}/.test(text));
  const place = frame >= 0 && frame < row && rows.length - frame <= 8 ? "status" : "conversation";
  return { ...(drawn ? { drawn } : {}), ...(glyph ? { glyph } : {}), place };
}

function recordOf(record: ((line: string) => SpeakerFacts["record"]) | undefined, line: string): Pick<SpeakerFacts, "record"> {
  const found = record?.(line);
  return found ? { record: found } : {};
}
