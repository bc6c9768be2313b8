import { AltCapture } from "./alt-capture.js";
import type { Grid } from "./text-grid.js";
import type { TerminalModes } from "./tty.js";
import { VtStream } from "./vt-stream.js";

// A model of what the agent has shown, read as plain text: the rows on its screen, the rows that scrolled off,
// and what it drew on the alternate screen. It parses output as it passes, in line with the pass-through.
export interface ScreenOptions {
  cols: number;
  rows: number;
  scrollback?: number;
}

// What one parsed batch of output did to the screen, for telling work from a redraw.
export interface DrawnBatch {
  // every line drawn since the last batch (see takeDrawn)
  lines: string[];
  // rows of content that came in at the bottom: the content moved up (a line feed at the bottom of the screen
  // or of a scroll region, or a repaint one or more rows higher), or it reached further down than before
  grew: number;
  // rows whose text changed where they stand, when the content did not move: before, after, and whether the
  // cursor is on the row
  redrawn: RedrawnRow[];
}

export interface RedrawnRow {
  before: string;
  after: string;
  cursor: boolean;
}

export interface ScreenSnapshot {
  visible: string[];
  changed: string[];
  conversation: string;
}

// the most lines one parsed batch hands to the detector: the last ones
const MAX_DRAWN = 400;
// the most rows a repaint is looked at for having moved the content up
const MAX_SHIFT = 8;
// output queued for the model goes in together this much later; while output floods in, it gathers for longer
// (up to this much, or this long), so that a flood is parsed in batches large enough to pass over what scrolls away
const BATCH_DELAY_MS = 8;
const FLOOD_BYTES = 256 * 1024;
const MAX_BATCH_BYTES = 16 * 1024 * 1024;
const MAX_BATCH_MS = 200;

export class Screen {
  private readonly vt: VtStream;
  private lastVisible: string[] = [];
  // lines drawn since the last takeDrawn(): every row completed by a line feed, and every row that changed
  private drawn: string[] = [];
  private drawnSnapshot: string[] = [];
  private snapshotAlt = false;
  // the lowest row the screen content has reached
  private reach = -1;
  private resized = false;
  private readonly recentlyDrawn = new Set<string>();
  private readonly altCapture = new AltCapture();
  private replyListener: ((data: string) => void) | undefined;
  private drawnListener: ((drawn: DrawnBatch) => void) | undefined;
  private queued: Buffer[] = [];
  private queuedBytes = 0;
  private queuedSince = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(options: ScreenOptions) {
    this.vt = new VtStream(options.cols, options.rows, options.scrollback ?? 5000, {
      lineFeed: () => this.lineFed(),
      leavingAlt: () => this.altCapture.end(this.visible()),
      switched: (alt) => (alt ? this.altCapture.begin(this.normalLinesToCursor()) : this.altCapture.end([])),
      reply: (data) => this.replyListener?.(data),
    });
    this.drawnSnapshot = this.visible();
  }

  // Parses a batch of output now, then looks at what it drew.
  write(chunk: Buffer | string): void {
    this.vt.write(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk);
    if (this.vt.modes.altScreen) this.altCapture.observe(this.visible());
    if (this.drawnListener) this.drawnListener(this.takeDrawn());
  }

  // Queues output for the model: chunks go in together a few milliseconds later, after the pass-through has
  // written them, so a flood is parsed in large batches and a keystroke's echo never waits for the model.
  queue(chunk: Buffer): void {
    if (this.queued.length === 0) this.queuedSince = Date.now();
    this.queued.push(chunk);
    this.queuedBytes += chunk.length;
    if (this.queuedBytes >= MAX_BATCH_BYTES) this.flush();
    else if (!this.timer) this.wait(BATCH_DELAY_MS);
  }

  // Everything queued, parsed: the visible screen, the rows changed since the last read that asked for them,
  // and (when asked) the conversation.
  read(options: { changed?: boolean; conversation?: boolean } = {}): Promise<ScreenSnapshot> {
    this.flush();
    return Promise.resolve({
      visible: this.visible(),
      changed: options.changed ? this.changedLines() : [],
      conversation: options.conversation ? this.conversation() : "",
    });
  }

  resize(cols: number, rows: number): void {
    this.flush();
    this.vt.resize(cols, rows);
    // the content reflows: what the next batch shows is not new
    this.resized = true;
  }

  get cols(): number {
    return this.vt.grid.cols;
  }

  get rows(): number {
    return this.vt.grid.height;
  }

  // Lines the agent drew and where they changed, after each parsed batch (see takeDrawn).
  onDrawn(listener: (drawn: DrawnBatch) => void): void {
    this.drawnListener = listener;
  }

  // Replies the terminal would send to queries (cursor position, device attributes); wired only without a real terminal.
  onReply(listener: (reply: string) => void): () => void {
    this.replyListener = listener;
    return () => (this.replyListener = undefined);
  }

  // The visible screen, one string per row, trailing blanks removed.
  visible(): string[] {
    const grid = this.vt.grid;
    const rows: string[] = new Array(grid.height);
    for (let y = 0; y < grid.height; y++) rows[y] = grid.rowAt(y).text();
    return rows;
  }

  // Every line drawn since the last call, even one erased again before anyone looked: rows completed by a line
  // feed, and rows that changed, except the one the cursor is on (an input line still being typed); with where
  // the change happened: rows that came in at the bottom, and rows redrawn where they stand.
  takeDrawn(): DrawnBatch {
    const grid = this.vt.grid;
    const alt = this.vt.modes.altScreen;
    const now = this.visible();
    const before = this.drawnSnapshot;
    const cursor = grid.y;
    const comparable = !this.resized && before.length === now.length && this.snapshotAlt === alt;
    let shift = grid.scrolls;
    if (!shift && comparable) shift = movedUp(before, now);
    const end = lastFilled(now);
    const reached = this.reach;
    const grew = comparable ? Math.max(shift, end - reached) : 0;
    this.reach = end < 0 ? -1 : comparable ? Math.max(reached - shift, end) : end;
    const redrawn: RedrawnRow[] = [];
    now.forEach((line, y) => {
      if (!line || line === before[y]) return;
      if (y !== cursor) this.drawn.push(line);
      // rows below the content's old end came in; they were not redrawn
      if (!shift && comparable && y <= reached) redrawn.push({ before: before[y] ?? "", after: line, cursor: y === cursor });
    });
    this.drawnSnapshot = now;
    this.snapshotAlt = alt;
    this.vt.normal.scrolls = 0;
    this.vt.alt.scrolls = 0;
    this.resized = false;
    // a flood of output is read by its end (where an agent that stops says why), and each line once
    const drawn: string[] = [];
    for (const line of this.drawn.slice(-MAX_DRAWN)) {
      if (this.recentlyDrawn.has(line)) continue;
      this.recentlyDrawn.add(line);
      if (this.recentlyDrawn.size > 4000) this.recentlyDrawn.delete(this.recentlyDrawn.values().next().value as string);
      drawn.push(line);
    }
    this.drawn = [];
    return { lines: drawn, grew, redrawn };
  }

  // Rows whose text changed since the last call, top to bottom.
  changedLines(): string[] {
    const now = this.visible();
    const changed = now.filter((line, y) => line !== this.lastVisible[y] && line !== "");
    this.lastVisible = now;
    return changed;
  }

  // The conversation so far as plain text: scrollback and screen with wrapped rows joined, including what
  // full-screen agents showed on the alternate screen, trailing blank lines removed.
  conversation(): string {
    const normal = logicalLines(this.vt.normal, 0, this.vt.normal.length);
    const lines = this.altCapture.merge(normal, this.vt.modes.altScreen ? this.visible() : undefined);
    while (lines.length && lines[lines.length - 1] === "") lines.pop();
    return lines.join("\n");
  }

  // The modes the agent has turned on, everything queued parsed first.
  get modes(): TerminalModes {
    this.flush();
    return { ...this.vt.modes };
  }

  // Nothing is left running: a queued batch is dropped with the model.
  dispose(): Promise<void> {
    clearTimeout(this.timer);
    this.queued = [];
    this.queuedBytes = 0;
    return Promise.resolve();
  }

  // --- internal ---

  private wait(ms: number): void {
    this.timer = setTimeout(() => this.due(), ms);
    this.timer.unref();
  }

  // At the batch's time: a flood still coming in gathers on, within bounds; anything else is parsed now.
  private due(): void {
    this.timer = undefined;
    const age = Date.now() - this.queuedSince;
    if (this.queuedBytes >= FLOOD_BYTES && age + BATCH_DELAY_MS <= MAX_BATCH_MS) return this.wait(BATCH_DELAY_MS);
    this.flush();
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queued.length === 0) return;
    const batch = this.queued.length === 1 ? this.queued[0]! : Buffer.concat(this.queued, this.queuedBytes);
    this.queued = [];
    this.queuedBytes = 0;
    const from = this.vt.passOver(batch);
    // the lines drawn before the part passed over would have left the list too
    if (from > 0) this.drawn = [];
    this.write(from > 0 ? batch.subarray(from) : batch);
  }

  // At a line feed: the row it completed is drawn; on the alternate screen, the scroll region may have moved.
  private lineFed(): void {
    const grid = this.vt.grid;
    if (this.vt.modes.altScreen) this.altCapture.lineFeed(regionRows(grid));
    if (this.drawn.length >= 4 * MAX_DRAWN) this.drawn.splice(0, this.drawn.length - MAX_DRAWN);
    const row = grid.y > 0 ? grid.rowAt(grid.y - 1).text() : grid.line(grid.keptLength - 1)?.text;
    if (row) this.drawn.push(row);
  }

  // How many lines of the normal screen hold text, up to the cursor: where a full-screen session begins.
  private normalLinesToCursor(): number {
    const normal = this.vt.normal;
    const lines = logicalLines(normal, 0, normal.keptLength + normal.y + 1);
    while (lines.length && lines[lines.length - 1] === "") lines.pop();
    return lines.length;
  }
}

// --- internal ---

function regionRows(grid: Grid): string[] {
  const rows: string[] = [];
  for (let y = grid.top; y <= Math.min(grid.bottom, grid.height - 1); y++) rows.push(grid.rowAt(y).text());
  return rows;
}

// How many rows a repaint moved the content up by (0 if it did not): most changed rows show what was that many
// rows lower before. Only a few shifts are tried, and only when several rows changed.
function movedUp(before: string[], now: string[]): number {
  let changed = 0;
  for (let y = 0; y < now.length; y++) if (now[y] && now[y] !== before[y]) changed++;
  if (changed < 2) return 0;
  for (let k = 1; k <= Math.min(MAX_SHIFT, now.length - 1); k++) {
    let matched = 0;
    for (let y = 0; y + k < before.length; y++) if (now[y] && now[y] !== before[y] && now[y] === before[y + k]) matched++;
    if (matched >= 2 && matched * 2 >= changed) return k;
  }
  return 0;
}

function lastFilled(rows: string[]): number {
  for (let y = rows.length - 1; y >= 0; y--) if (rows[y]) return y;
  return -1;
}

// Rows joined where the terminal wrapped them; a row that wraps keeps its trailing blanks (they are text).
function logicalLines(grid: Grid, from: number, to: number): string[] {
  const lines: string[] = [];
  for (let n = from; n < to; n++) {
    const line = grid.line(n)!;
    const text = grid.line(n + 1)?.wrapped ? line.full(grid.cols) : line.text;
    if (line.wrapped && lines.length) lines[lines.length - 1] += text;
    else lines.push(text);
  }
  return lines.map((line) => line.trimEnd());
}
