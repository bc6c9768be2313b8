import { createRequire } from "node:module";

import type { IBuffer, IBufferCell, Terminal as XTerminal } from "@xterm/headless";

import { AltCapture } from "./alt-capture.js";
import { lineStyle, type StyleRun } from "./line-style.js";
import type { TerminalModes } from "./tty.js";

// A model of what the agent has shown, read as plain text: the rows on its screen, the rows that scrolled off,
// and what it drew on the alternate screen. A headless terminal emulator parses the output a few milliseconds
// after the pass-through has written it; what the reader gets comes from the emulator's buffers once they hold it.
export interface ScreenOptions {
  cols: number;
  rows: number;
  scrollback?: number;
  // the most output that goes to the emulator as one batch, and that waits for it while it is busy
  maxBatchBytes?: number;
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

export type { StyleRun } from "./line-style.js";

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
// CAN: ends whatever sequence the emulator was in the middle of, when output before it was left out
const CANCEL = "\x18";

export class Screen {
  private readonly term: XTerminal;
  private readonly scrollback: number;
  private readonly maxBatchBytes: number;
  private lastVisible: string[] = [];
  // lines drawn since the last takeDrawn(): every row completed by a line feed, and every row that changed
  private drawn: string[] = [];
  private drawnSnapshot: string[] = [];
  private snapshotAlt = false;
  // rows scrolled up since the last takeDrawn(), and the lowest row the screen content has reached
  private scrolls = 0;
  private reach = -1;
  private resized = false;
  private readonly recentlyDrawn = new Set<string>();
  private readonly altCapture = new AltCapture();
  // what the emulator keeps to itself: the cursor's visibility, the kitty keyboard stack, each screen's scroll region
  private cursorHidden = false;
  private kittyDepth = 0;
  private readonly regions: Record<IBuffer["type"], Region | undefined> = { normal: undefined, alternate: undefined };
  private replyListener: ((data: string) => void) | undefined;
  private drawnListener: ((drawn: DrawnBatch) => void) | undefined;
  private queued: Buffer[] = [];
  private queuedBytes = 0;
  private queuedSince = 0;
  private timer: NodeJS.Timeout | undefined;
  // batches handed to the emulator and not parsed yet
  private inFlight = 0;
  // output was left out of the model while it was behind: what comes next starts afresh
  private lost = false;
  private cell: IBufferCell | undefined;
  private disposed: Promise<void> | undefined;

  constructor(options: ScreenOptions) {
    this.scrollback = options.scrollback ?? 5000;
    this.maxBatchBytes = options.maxBatchBytes ?? MAX_BATCH_BYTES;
    this.term = new (terminalClass())({ cols: options.cols, rows: options.rows, scrollback: this.scrollback, allowProposedApi: true, logLevel: "off" });
    this.listen();
    this.drawnSnapshot = this.visible();
  }

  // Hands output to the emulator; once it is parsed, the alternate screen is looked at and the batch told to
  // onDrawn. Resolves then.
  write(chunk: Buffer | string): Promise<void> {
    this.inFlight++;
    return new Promise((resolve) => {
      this.term.write(chunk, () => {
        this.inFlight--;
        this.parsed();
        resolve();
      });
    });
  }

  // Queues output for the model: chunks go in together a few milliseconds later, after the pass-through has
  // written them, so a flood is parsed in large batches and a keystroke's echo never waits for the model.
  queue(chunk: Buffer): void {
    if (this.disposed) return;
    if (this.queued.length === 0) this.queuedSince = Date.now();
    this.queued.push(chunk);
    this.queuedBytes += chunk.length;
    if (this.queuedBytes >= this.maxBatchBytes) this.flush(false);
    else if (!this.timer) this.wait(BATCH_DELAY_MS);
  }

  // Everything queued, parsed: the visible screen, the rows changed since the last read that asked for them,
  // and (when asked) the conversation.
  async read(options: { changed?: boolean; conversation?: boolean } = {}): Promise<ScreenSnapshot> {
    this.flush(true);
    await this.parsedAll();
    return {
      visible: this.visible(),
      changed: options.changed ? this.changedLines() : [],
      conversation: options.conversation ? this.conversation() : "",
    };
  }

  resize(cols: number, rows: number): void {
    this.flush(true);
    this.term.resize(cols, rows);
    this.regions.normal = undefined;
    this.regions.alternate = undefined;
    // the content reflows: what the next batch shows is not new
    this.resized = true;
  }

  get cols(): number {
    return this.term.cols;
  }

  get rows(): number {
    return this.term.rows;
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
    const buffer = this.term.buffer.active;
    const rows: string[] = new Array(this.term.rows);
    for (let y = 0; y < rows.length; y++) rows[y] = rowText(buffer, buffer.baseY + y);
    return rows;
  }

  // How a visible row is drawn, stretch by stretch: colour, bold, dim, inverse. Worked out when asked, for that row.
  lineStyle(row: number): StyleRun[] {
    const buffer = this.term.buffer.active;
    const line = row >= 0 && row < this.term.rows ? buffer.getLine(buffer.baseY + row) : undefined;
    return line ? lineStyle(line, (this.cell ??= buffer.getNullCell())) : [];
  }

  // Every line drawn since the last call, even one erased again before anyone looked: rows completed by a line
  // feed, and rows that changed, except the one the cursor is on (an input line still being typed); with where
  // the change happened: rows that came in at the bottom, and rows redrawn where they stand.
  takeDrawn(): DrawnBatch {
    return this.drawnOn(this.visible());
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
    const normal = this.term.buffer.normal;
    const alt = this.term.buffer.active.type === "alternate";
    const lines = this.altCapture.merge(logicalLines(normal, 0, normal.length), alt ? this.visible() : undefined);
    while (lines.length && lines[lines.length - 1] === "") lines.pop();
    return lines.join("\n");
  }

  // The modes the agent has turned on, as far as its output has been parsed.
  get modes(): TerminalModes {
    const modes = this.term.modes;
    return {
      altScreen: this.term.buffer.active.type === "alternate",
      bracketedPaste: modes.bracketedPasteMode,
      mouse: modes.mouseTrackingMode !== "none",
      focus: modes.sendFocusMode,
      kittyKeyboard: this.kittyDepth > 0,
      cursorHidden: this.cursorHidden,
      applicationCursor: modes.applicationCursorKeysMode,
      applicationKeypad: modes.applicationKeypadMode,
    };
  }

  // Nothing is left running: a queued batch is dropped and no more is taken; output already handed over is parsed.
  // The screen stays readable (a receiver that exited is described by what it left on it), and the emulator, which
  // holds no timer or handle, goes with the Screen.
  dispose(): Promise<void> {
    clearTimeout(this.timer);
    this.queued = [];
    this.queuedBytes = 0;
    this.disposed ??= this.parsedAll();
    return this.disposed;
  }

  // --- internal ---

  // takeDrawn, with the visible rows read already
  private drawnOn(now: string[]): DrawnBatch {
    const buffer = this.term.buffer.active;
    const alt = buffer.type === "alternate";
    const before = this.drawnSnapshot;
    const cursor = buffer.cursorY;
    const comparable = !this.resized && before.length === now.length && this.snapshotAlt === alt;
    let shift = this.scrolls;
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
    this.scrolls = 0;
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

  // The emulator's events and the sequences the model notes before the emulator acts on them.
  private listen(): void {
    const term = this.term;
    term.onData((data) => this.replyListener?.(data));
    term.onScroll(() => this.scrolls++);
    term.onLineFeed(() => this.lineFed());
    term.buffer.onBufferChange((buffer) => {
      if (buffer.type === "alternate") return this.altCapture.begin(this.normalLinesToCursor());
      this.altCapture.end([]);
      this.regions.alternate = undefined;
    });
    const parser = term.parser;
    parser.registerCsiHandler({ final: "r" }, (params) => this.setRegion(params));
    parser.registerCsiHandler({ intermediates: "!", final: "p" }, () => this.setRegion([]));
    parser.registerCsiHandler({ prefix: "?", final: "h" }, (params) => this.privateModes(params, true));
    parser.registerCsiHandler({ prefix: "?", final: "l" }, (params) => this.privateModes(params, false));
    parser.registerCsiHandler({ prefix: ">", final: "u" }, () => {
      this.kittyDepth++;
      return true;
    });
    parser.registerCsiHandler({ prefix: "<", final: "u" }, (params) => {
      this.kittyDepth = Math.max(0, this.kittyDepth - (Number(params[0]) || 1));
      return true;
    });
    parser.registerEscHandler({ final: "c" }, () => {
      this.leaveAlt();
      this.cursorHidden = false;
      this.kittyDepth = 0;
      this.regions.normal = undefined;
      return false;
    });
  }

  // After each batch the emulator has parsed.
  private parsed(): void {
    const alt = this.term.buffer.active.type === "alternate";
    if (!alt && !this.drawnListener) return this.next();
    const now = this.visible();
    if (alt) this.altCapture.observe(now);
    if (this.drawnListener) this.drawnListener(this.drawnOn(now));
    this.next();
  }

  // Output that came in while the emulator was busy goes in at the batch's time, as any other: a flood gathers on
  // (so that most of it is passed over) rather than keeping the emulator busy with one small batch after another.
  private next(): void {
    if (this.inFlight === 0 && this.queued.length && !this.timer) this.wait(BATCH_DELAY_MS);
  }

  // Resolves once everything handed to the emulator has been parsed.
  private parsedAll(): Promise<void> {
    return new Promise((resolve) => this.term.write("", resolve));
  }

  private wait(ms: number): void {
    this.timer = setTimeout(() => this.due(), ms);
    this.timer.unref();
  }

  // At the batch's time: a flood still coming in gathers on, within bounds; anything else is parsed now.
  private due(): void {
    this.timer = undefined;
    const age = Date.now() - this.queuedSince;
    if (this.queuedBytes >= FLOOD_BYTES && age + BATCH_DELAY_MS <= MAX_BATCH_MS) return this.wait(BATCH_DELAY_MS);
    this.flush(false);
  }

  // Hands what is queued to the emulator: at once when asked to (a read waits for it), else when the emulator has
  // parsed the last batch. A batch whose beginning scrolls away unseen is handed over without that beginning.
  private flush(now: boolean): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.queued.length === 0) return;
    if (this.inFlight > 0 && !now) return this.bound();
    let batch = this.queued.length === 1 ? this.queued[0]! : Buffer.concat(this.queued, this.queuedBytes);
    this.queued = [];
    this.queuedBytes = 0;
    const from = this.inFlight === 0 ? this.passOver(batch) : 0;
    if (from > 0) {
      batch = batch.subarray(from);
      // the lines drawn before the part passed over would have left the list too
      this.drawn = [];
      this.scrolls += this.scrollback + this.term.rows;
      // a blank screen with the cursor on its last row: the lines that stay push it, and all before it, away
      this.term.write(`${CANCEL}\x1b[2J\x1b[${this.term.rows};1H`);
    } else if (this.lost) this.term.write(CANCEL);
    this.lost = false;
    void this.write(batch);
  }

  // While the emulator is busy, at most one batch's worth waits for it: the oldest output is left out of the model
  // (the pass-through has shown it), and the model starts afresh after the gap.
  private bound(): void {
    while (this.queuedBytes > this.maxBatchBytes && this.queued.length > 1) {
      this.queuedBytes -= this.queued.shift()!.length;
      this.lost = true;
      this.drawn = [];
    }
  }

  // Where the emulator may begin a batch: past a plain beginning that the rest pushes out of screen and history
  // (see floodStart), when the emulator is on the normal screen without a scroll region. (A sequence the output
  // before the batch left unfinished is cancelled rather than finished by the part passed over.)
  private passOver(batch: Buffer): number {
    if (this.term.buffer.active.type !== "normal" || this.regions.normal) return 0;
    return floodStart(batch, this.scrollback + this.term.rows);
  }

  // At a line feed: the row it completed is drawn; on the alternate screen, the scroll region may have moved.
  private lineFed(): void {
    const buffer = this.term.buffer.active;
    if (buffer.type === "alternate") this.altCapture.lineFeed(this.regionRows(buffer));
    if (this.drawn.length >= 4 * MAX_DRAWN) this.drawn.splice(0, this.drawn.length - MAX_DRAWN);
    const row = rowText(buffer, buffer.baseY + buffer.cursorY - 1);
    if (row) this.drawn.push(row);
  }

  // Before a mode change takes effect: the cursor's visibility is noted, and the alternate screen's last content
  // is kept before leaving it clears it.
  private privateModes(params: (number | number[])[], on: boolean): boolean {
    if (params.includes(25)) this.cursorHidden = !on;
    if (!on && (params.includes(1049) || params.includes(1047) || params.includes(47))) this.leaveAlt();
    return false;
  }

  private leaveAlt(): void {
    if (this.term.buffer.active.type === "alternate") this.altCapture.end(this.visible());
  }

  // A scroll region set (DECSTBM) or reset; the emulator acts on it too.
  private setRegion(params: (number | number[])[]): boolean {
    const rows = this.term.rows;
    const top = Math.max(1, Number(params[0]) || 1);
    const bottom = Math.min(rows, Number(params[1]) || rows);
    if (top < bottom) this.regions[this.term.buffer.active.type] = top === 1 && bottom === rows ? undefined : { top: top - 1, bottom: bottom - 1 };
    return false;
  }

  private regionRows(buffer: IBuffer): string[] {
    const region = this.regions[buffer.type];
    const bottom = Math.min(region?.bottom ?? this.term.rows - 1, this.term.rows - 1);
    const rows: string[] = [];
    for (let y = region?.top ?? 0; y <= bottom; y++) rows.push(rowText(buffer, buffer.baseY + y));
    return rows;
  }

  // How many lines of the normal screen hold text, up to the cursor: where a full-screen session begins.
  private normalLinesToCursor(): number {
    const normal = this.term.buffer.normal;
    const lines = logicalLines(normal, 0, normal.baseY + normal.cursorY + 1);
    while (lines.length && lines[lines.length - 1] === "") lines.pop();
    return lines.length;
  }
}

// --- internal ---

let TerminalClass: typeof XTerminal | undefined;

// @xterm/headless, loaded with the first screen rather than as uuldana starts (it is the largest module a run
// needs); a CommonJS bundle, so its class comes from the module's exports, not from a named import.
function terminalClass(): typeof XTerminal {
  TerminalClass ??= (createRequire(import.meta.url)("@xterm/headless") as { Terminal: typeof XTerminal }).Terminal;
  return TerminalClass;
}

interface Region {
  top: number;
  bottom: number;
}

function rowText(buffer: IBuffer, y: number): string {
  return buffer.getLine(y)?.translateToString(true).trimEnd() ?? "";
}

// Where parsing a batch of output may begin: past a beginning of plain text (no escape sequences, nothing but
// line feeds, returns, tabs and backspaces) that is followed by more lines than the screen and its history hold
// (`lines`). Those lines push everything before them out of both, so the screen after the batch is the same
// whether the beginning is parsed or passed over; passing over it lets a flood of output through at the
// terminal's speed. 0 when the batch does not allow it.
function floodStart(bytes: Buffer, lines: number): number {
  // the start of the lines that stay: just after the (lines + 1)-th line feed from the end
  let at = bytes.length;
  for (let n = 0; n <= lines; n++) {
    at = bytes.lastIndexOf(0x0a, at - 1);
    if (at <= 0) return 0;
  }
  // the beginning ends with a return and a line feed, so the lines that stay begin in the first column
  if (bytes[at - 1] !== 0x0d) return 0;
  const end = at + 1;
  const escape = bytes.indexOf(0x1b);
  if ((escape !== -1 && escape < end) || hasC1(bytes, end)) return 0;
  return end;
}

// Whether the first `end` bytes hold a C1 control written as a character (U+0080 to U+009F, which act as escapes).
function hasC1(bytes: Buffer, end: number): boolean {
  for (let at = bytes.indexOf(0xc2); at !== -1 && at < end - 1; at = bytes.indexOf(0xc2, at + 1)) {
    if (bytes[at + 1]! >= 0x80 && bytes[at + 1]! < 0xa0) return true;
  }
  return false;
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
function logicalLines(buffer: IBuffer, from: number, to: number): string[] {
  const lines: string[] = [];
  for (let y = from; y < to; y++) {
    const line = buffer.getLine(y);
    if (!line) continue;
    const text = line.translateToString(!buffer.getLine(y + 1)?.isWrapped);
    if (line.isWrapped && lines.length) lines[lines.length - 1] += text;
    else lines.push(text);
  }
  return lines.map((line) => line.trimEnd());
}
