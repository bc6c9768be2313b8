import { createRequire } from "node:module";

import type { TerminalModes } from "./tty.js";

// The one module that loads @xterm/headless: a model of what the agent has shown, read as plain text.
export interface ScreenOptions {
  cols: number;
  rows: number;
  scrollback?: number;
  // Past this many characters waiting to be parsed, output is left out of the model (never held back).
  maxPending?: number;
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

interface Line {
  isWrapped: boolean;
  translateToString(trimRight?: boolean): string;
}

interface XBuffer {
  type: "normal" | "alternate";
  length: number;
  baseY: number;
  cursorY: number;
  getLine(y: number): Line | undefined;
}

interface HeadlessTerminal {
  cols: number;
  rows: number;
  buffer: { active: XBuffer; normal: XBuffer; alternate: XBuffer; onBufferChange(listener: (buffer: XBuffer) => void): unknown };
  modes: {
    bracketedPasteMode: boolean;
    mouseTrackingMode: string;
    sendFocusMode: boolean;
    applicationCursorKeysMode: boolean;
    applicationKeypadMode: boolean;
  };
  write(data: string | Uint8Array, callback?: () => void): void;
  resize(cols: number, rows: number): void;
  onData(listener: (data: string) => void): { dispose(): void };
  onWriteParsed(listener: () => void): { dispose(): void };
  onLineFeed(listener: () => void): { dispose(): void };
  onScroll(listener: (position: number) => void): { dispose(): void };
  parser: {
    registerCsiHandler(id: { prefix?: string; final: string }, callback: (params: (number | number[])[]) => boolean): unknown;
  };
  dispose(): void;
}

type TerminalClass = new (options: Record<string, unknown>) => HeadlessTerminal;

const DEFAULT_MAX_PENDING = 10_000_000;
// the most lines one parsed batch hands to the detector: the last ones
const MAX_DRAWN = 400;
// the most rows a repaint is looked at for having moved the content up
const MAX_SHIFT = 8;

export class Screen {
  private readonly term: HeadlessTerminal;
  private readonly maxPending: number;
  private pending = 0;
  private lastVisible: string[] = [];
  // lines drawn since the last takeDrawn(): every row completed by a line feed, and every row that changed
  private drawn: string[] = [];
  private drawnSnapshot: string[] = [];
  private snapshotBuffer: "normal" | "alternate" = "normal";
  // rows that scrolled since the last takeDrawn(), and the lowest row of the screen content has reached
  private scrolls = 0;
  private reach = -1;
  private resized = false;
  private readonly recentlyDrawn = new Set<string>();
  private cursorHidden = false;
  private kittyDepth = 0;
  // the scroll region (DECSTBM), 0-based rows, for collecting lines that scroll off the alternate screen
  private region: { top: number; bottom: number } | undefined;
  private readonly altCapture = new AltCapture();
  // characters of output left out of the model because it fell too far behind
  droppedChars = 0;
  droppedChunks = 0;

  constructor(options: ScreenOptions) {
    const Terminal = loadTerminal();
    this.maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
    this.term = new Terminal({
      cols: options.cols,
      rows: options.rows,
      scrollback: options.scrollback ?? 5000,
      allowProposedApi: true,
      logLevel: "off",
    });
    this.term.buffer.onBufferChange((buffer) => {
      if (buffer.type === "alternate") this.altCapture.begin(this.normalLinesToCursor());
      else this.altCapture.end([]);
    });
    this.drawnSnapshot = this.visible();
    this.term.onScroll(() => this.scrolls++);
    this.term.onLineFeed(() => {
      const buffer = this.term.buffer.active;
      if (buffer.type === "alternate") this.altCapture.lineFeed(this.regionRows());
      if (this.drawn.length >= 4 * MAX_DRAWN) this.drawn.splice(0, this.drawn.length - MAX_DRAWN);
      const row = buffer.getLine(buffer.baseY + buffer.cursorY - 1)?.translateToString(true).trimEnd();
      if (row) this.drawn.push(row);
    });
    this.term.parser.registerCsiHandler({ final: "r" }, (params) => {
      const top = Number(params[0]) || 1;
      const bottom = Number(params[1]) || this.term.rows;
      this.region = top === 1 && bottom === this.term.rows ? undefined : { top: top - 1, bottom: bottom - 1 };
      return false;
    });
    this.term.onWriteParsed(() => {
      if (this.term.buffer.active.type === "alternate") this.altCapture.observe(this.visible());
    });
    this.term.parser.registerCsiHandler({ prefix: "?", final: "h" }, (params) => this.trackCursor(params, true));
    this.term.parser.registerCsiHandler({ prefix: "?", final: "l" }, (params) => this.trackCursor(params, false));
    this.term.parser.registerCsiHandler({ prefix: ">", final: "u" }, () => {
      this.kittyDepth++;
      return true;
    });
    this.term.parser.registerCsiHandler({ prefix: "<", final: "u" }, (params) => {
      this.kittyDepth = Math.max(0, this.kittyDepth - (Number(params[0]) || 1));
      return true;
    });
  }

  // Feeds output to the model without waiting; if the model is too far behind, the chunk is counted and left out.
  write(chunk: Buffer | string, parsed?: () => void): void {
    if (this.pending + chunk.length > this.maxPending) {
      this.droppedChars += chunk.length;
      this.droppedChunks++;
      parsed?.();
      return;
    }
    this.pending += chunk.length;
    this.term.write(typeof chunk === "string" ? chunk : new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length), () => {
      this.pending -= chunk.length;
      parsed?.();
    });
  }

  // Called after each batch of output has been parsed.
  onParsed(listener: () => void): () => void {
    const subscription = this.term.onWriteParsed(listener);
    return () => subscription.dispose();
  }

  // Resolves once everything written so far has been parsed.
  settle(): Promise<void> {
    return new Promise((resolve) => this.term.write("", resolve));
  }

  resize(cols: number, rows: number): void {
    this.term.resize(cols, rows);
    // the content reflows: what the next batch shows is not new
    this.resized = true;
  }

  get cols(): number {
    return this.term.cols;
  }

  get rows(): number {
    return this.term.rows;
  }

  // Replies the terminal would send to queries (cursor position, device attributes); wired only without a real terminal.
  onReply(listener: (reply: string) => void): () => void {
    const subscription = this.term.onData(listener);
    return () => subscription.dispose();
  }

  // The visible screen, one string per row, trailing blanks removed.
  visible(): string[] {
    return this.screenLines(this.term.buffer.active);
  }

  // Every line drawn since the last call, even one erased again before anyone looked: rows completed by a line
  // feed, and rows that changed, except the one the cursor is on (an input line still being typed); with where
  // the change happened: rows that came in at the bottom, and rows redrawn where they stand.
  takeDrawn(): DrawnBatch {
    const buffer = this.term.buffer.active;
    const now = this.visible();
    const before = this.drawnSnapshot;
    const cursor = buffer.cursorY;
    const comparable = !this.resized && before.length === now.length && this.snapshotBuffer === buffer.type;
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
    this.snapshotBuffer = buffer.type;
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
    const normal = this.normalLines();
    const lines = this.altCapture.merge(normal, this.term.buffer.active.type === "alternate" ? this.visible() : undefined);
    while (lines.length && lines[lines.length - 1] === "") lines.pop();
    return lines.join("\n");
  }

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

  dispose(): void {
    this.term.dispose();
  }

  // --- internal ---

  // Runs before the terminal handles a mode change: notes the cursor, and keeps the alternate screen's last
  // content before leaving it clears it.
  private trackCursor(params: (number | number[])[], on: boolean): boolean {
    if (params.includes(25)) this.cursorHidden = !on;
    const leavingAlt = !on && (params.includes(1049) || params.includes(1047) || params.includes(47));
    if (leavingAlt && this.term.buffer.active.type === "alternate") this.altCapture.end(this.visible());
    return false;
  }

  // How many lines of the normal buffer hold text, up to the cursor: where a full-screen session begins.
  private normalLinesToCursor(): number {
    const normal = this.term.buffer.normal;
    const lines = logicalLines(normal, 0, normal.baseY + normal.cursorY + 1);
    while (lines.length && lines[lines.length - 1] === "") lines.pop();
    return lines.length;
  }

  private normalLines(): string[] {
    return logicalLines(this.term.buffer.normal, 0, this.term.buffer.normal.length);
  }

  private regionRows(): string[] {
    const buffer = this.term.buffer.active;
    const top = this.region?.top ?? 0;
    const bottom = Math.min(this.region?.bottom ?? this.term.rows - 1, this.term.rows - 1);
    const rows: string[] = [];
    for (let y = top; y <= bottom; y++) rows.push((buffer.getLine(y)?.translateToString(true) ?? "").trimEnd());
    return rows;
  }

  private screenLines(buffer: XBuffer): string[] {
    const start = buffer.type === "normal" ? buffer.baseY : 0;
    const lines: string[] = [];
    for (let y = start; y < start + this.term.rows; y++) lines.push((buffer.getLine(y)?.translateToString(true) ?? "").trimEnd());
    return lines;
  }
}

// --- internal ---

// Full-screen agents keep no scrollback on the alternate screen: lines that leave it are collected as they go.
class AltCapture {
  private sessions: { at: number; lines: string[] }[] = [];
  private current: { at: number; lines: string[] } | undefined;
  private previous: string[] = [];
  private stable = new Set<string>();
  private lastRegion: string[] | undefined;

  begin(normalLength: number): void {
    this.current = { at: normalLength, lines: [] };
    this.sessions.push(this.current);
    this.previous = [];
    this.stable = new Set();
    this.lastRegion = undefined;
  }

  // Called at every line feed with the scroll region's rows: when they moved up by one, the top row left.
  // (The bottom row is still blank at a line feed, so it is left out of the comparison.)
  lineFeed(region: string[]): void {
    const last = this.lastRegion;
    this.lastRegion = region;
    if (!this.current || !last || last.length !== region.length || region.length < 3) return;
    for (let y = 0; y < region.length - 2; y++) if (region[y] !== last[y + 1]) return;
    if (last[0]!.trim()) this.keep(last[0]!);
  }

  // Called with each new screen: a line shown on two screens in a row that is then gone is kept, unless the line
  // that replaced it merely extends it (typing).
  observe(screen: string[]): void {
    if (!this.current) return;
    const now = new Set(screen);
    // a screen wiped whole (as before leaving it) was the last one: all of it is kept
    const wiped = screen.every((line) => !line.trim());
    for (const [y, line] of this.previous.entries()) {
      if (!line.trim() || now.has(line)) continue;
      const successor = screen[y] ?? "";
      if (!wiped && (!this.stable.has(line) || successor.startsWith(line) || line.startsWith(successor))) continue;
      this.keep(line);
    }
    this.stable = new Set(screen.filter((line) => this.previous.includes(line)));
    this.previous = screen;
  }

  end(lastScreen: string[]): void {
    if (!this.current) return;
    // an agent that clears its screen in the same output that leaves it: what was last seen is kept first
    const now = new Set(lastScreen);
    for (const line of this.previous) if (line.trim() && !now.has(line)) this.keep(line);
    for (const line of lastScreen) if (line.trim()) this.keep(line);
    this.current = undefined;
  }

  // The normal buffer's lines with each alternate-screen session's lines where it began.
  merge(normal: string[], liveScreen: string[] | undefined): string[] {
    const result: string[] = [];
    let from = 0;
    for (const session of this.sessions) {
      const at = Math.min(session.at, normal.length);
      result.push(...normal.slice(from, at), ...session.lines);
      if (session === this.current && liveScreen) {
        result.push(...liveScreen.filter((line) => line.trim() && !session.lines.slice(-liveScreen.length).includes(line)));
      }
      from = at;
    }
    result.push(...normal.slice(from));
    return result;
  }

  private keep(line: string): void {
    const lines = this.current!.lines;
    if (lines.slice(-50).includes(line)) return;
    lines.push(line);
  }
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
function logicalLines(buffer: XBuffer, from: number, to: number): string[] {
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

let TerminalCtor: TerminalClass | undefined;

function loadTerminal(): TerminalClass {
  // @xterm/headless is a CommonJS bundle: require it rather than import a named export Node cannot see
  TerminalCtor ??= (createRequire(import.meta.url)("@xterm/headless") as { Terminal: TerminalClass }).Terminal;
  return TerminalCtor;
}
