// The agent's screen as text: rows of characters, a cursor, a scroll region, and (on the normal screen) the rows
// that scrolled off the top, kept as strings. No colours or other attributes: uuldana reads words, not cells.

// a cell never written or erased; the right half of a wide character; a character with marks joined to it, or
// one beyond the 16 bits of a cell
const BLANK = 0;
const WIDE_TAIL = 1;
const CLUSTER = 2;

// One row of cells; its text is made once and kept until the row changes.
export class Row {
  cells: Uint16Array;
  // the cells' bytes, for reading them as UTF-16 text
  private bytes: Buffer;
  // cells in use: the last written cell + 1
  length = 0;
  // the row continues the one above it (the text ran past the right edge)
  wrapped = false;
  // every cell in use holds one plain character, so the text is one native conversion
  private plain = true;
  private clusters: Map<number, string> | undefined;
  private cached: string | undefined;
  // a row written in one piece of plain ASCII from its first column: the text itself, its cells not yet filled
  // (most rows of a flood are never touched again before they scroll away)
  private raw: string | undefined;

  constructor(cols: number) {
    this.cells = new Uint16Array(cols);
    this.bytes = Buffer.from(this.cells.buffer);
  }

  // The row's text with trailing blanks removed.
  text(): string {
    return (this.cached ??= this.render().trimEnd());
  }

  // The row's text as wide as the given width: a row that wraps keeps its trailing blanks (they are text).
  fullText(width: number): string {
    return this.render() + " ".repeat(Math.max(0, width - this.length));
  }

  // How many columns the row's text takes, trailing blanks left out.
  textWidth(): number {
    if (this.raw !== undefined) return this.text().length;
    let end = this.length;
    while (end > 0 && (this.cells[end - 1] === BLANK || this.cells[end - 1] === 0x20)) end--;
    return end;
  }

  // ASCII bytes written from column x on (the caller has made room and checked the width).
  writeBytes(bytes: Buffer, from: number, to: number, x: number): void {
    if (x === 0 && this.length === 0 && this.raw === undefined) {
      this.raw = bytes.toString("latin1", from, to);
      this.length = to - from;
      this.cached = undefined;
      return;
    }
    this.materialize();
    const cells = this.cells;
    const end = x + to - from;
    if (!this.plain) this.overwrite(x, end);
    for (let i = from, at = x; i < to; i++, at++) cells[at] = bytes[i]!;
    if (x > this.length) this.plain = false;
    if (x + to - from > this.length) this.length = x + to - from;
    this.cached = undefined;
  }

  write(x: number, codePoint: number, width: number): void {
    this.materialize();
    const cells = this.cells;
    this.overwrite(x, x + width);
    if (codePoint > 0xffff) (this.clusters ??= new Map()).set(x, String.fromCodePoint(codePoint));
    cells[x] = codePoint > 0xffff ? CLUSTER : codePoint;
    if (width === 2) cells[x + 1] = WIDE_TAIL;
    if (codePoint > 0xffff || width === 2 || x > this.length || codePoint < 0x20) this.plain = false;
    if (x + width > this.length) this.length = x + width;
    this.cached = undefined;
  }

  // A mark joined to the character in column x.
  join(x: number, mark: string): void {
    this.materialize();
    const cells = this.cells;
    if (x >= this.length || cells[x] === BLANK) return;
    const base = cells[x] === CLUSTER ? this.clusters!.get(x)! : String.fromCharCode(cells[x]!);
    // a bounded cluster: endless marks on one character cannot grow a row without end
    if (base.length > 32) return;
    (this.clusters ??= new Map()).set(x, base + mark);
    cells[x] = CLUSTER;
    this.plain = false;
    this.cached = undefined;
  }

  erase(from: number, to: number): void {
    this.materialize();
    const end = Math.min(to, this.length);
    if (from >= end) return;
    if (end === this.length && from === 0) return this.clear();
    this.overwrite(from, end);
    this.cells.fill(BLANK, from, end);
    if (end === this.length) this.length = from;
    else this.plain = false;
    this.cached = undefined;
  }

  // Characters inserted at x (blanks), pushing the rest right; those pushed past cols are lost.
  insert(x: number, count: number, cols: number): void {
    if (x >= this.length) return;
    this.materialize();
    const cells = this.cells;
    this.overwrite(x, x);
    const end = Math.min(this.length + count, cols);
    // a wide character pushed half past the edge is gone
    const cut = cols - count > x && cells[cols - count] === WIDE_TAIL;
    cells.copyWithin(x + count, x, end - count);
    this.moveClusters(x, count, end);
    cells.fill(BLANK, x, Math.min(x + count, end));
    if (cut) cells[cols - 1] = BLANK;
    this.length = end;
    this.plain = false;
    this.cached = undefined;
  }

  // Characters deleted at x, pulling the rest left.
  delete(x: number, count: number): void {
    if (x >= this.length) return;
    this.materialize();
    const cells = this.cells;
    const n = Math.min(count, this.length - x);
    this.overwrite(x, x + n);
    cells.copyWithin(x, x + n, this.length);
    this.moveClusters(x + n, -n, this.length);
    cells.fill(BLANK, this.length - n, this.length);
    if (cells[x] === WIDE_TAIL) cells[x] = BLANK;
    this.length -= n;
    this.plain = false;
    this.cached = undefined;
  }

  clear(): void {
    if (this.raw === undefined) this.cells.fill(BLANK, 0, this.length);
    this.raw = undefined;
    this.length = 0;
    this.plain = true;
    this.clusters = undefined;
    this.cached = undefined;
  }

  // Room for at least cols cells (after the screen grew wider).
  widen(cols: number): void {
    if (this.cells.length >= cols) return;
    this.materialize();
    const cells = new Uint16Array(cols);
    cells.set(this.cells);
    this.cells = cells;
    this.bytes = Buffer.from(cells.buffer);
  }

  // --- internal ---

  // Cells [from, to) are about to change: a wide character cut in half is blanked, clusters there are dropped.
  private overwrite(from: number, to: number): void {
    const cells = this.cells;
    if (cells[from] === WIDE_TAIL && from > 0) cells[from - 1] = BLANK;
    if (to < this.length && cells[to] === WIDE_TAIL) cells[to] = BLANK;
    if (this.clusters) for (let x = from; x < to; x++) if (cells[x] === CLUSTER) this.clusters.delete(x);
  }

  // Clusters from column from on move by shift columns (characters inserted or deleted before them).
  private moveClusters(from: number, shift: number, end: number): void {
    if (!this.clusters?.size) return;
    const moved = new Map<number, string>();
    for (const [x, text] of this.clusters) {
      if (x < from) moved.set(x, text);
      else if (x + shift >= 0 && x + shift < end) moved.set(x + shift, text);
    }
    this.clusters = moved;
  }

  // The text of a row written in one piece, put into its cells before anything changes them.
  private materialize(): void {
    const raw = this.raw;
    if (raw === undefined) return;
    this.raw = undefined;
    const cells = this.cells;
    for (let i = 0; i < raw.length; i++) cells[i] = raw.charCodeAt(i);
  }

  private render(): string {
    if (this.raw !== undefined) return this.raw;
    const cells = this.cells;
    if (this.plain) return LITTLE_ENDIAN ? this.bytes.toString("utf16le", 0, this.length * 2) : fromCodes(cells, this.length);
    const codes = new Uint16Array(this.length);
    let n = 0;
    let extra = "";
    for (let x = 0; x < this.length; x++) {
      const cell = cells[x]!;
      if (cell === WIDE_TAIL) continue;
      if (cell === CLUSTER) {
        // the text so far, then the character that needs more than one code unit
        extra += fromCodes(codes, n) + this.clusters!.get(x)!;
        n = 0;
      } else codes[n++] = cell < 0x20 ? 0x20 : cell;
    }
    return extra + fromCodes(codes, n);
  }
}

// A row that scrolled off the top, as text.
export interface KeptRow {
  text: string;
  wrapped: boolean;
  // the blank columns after the text, up to the screen's width
  blanks: number;
}

// One screen's rows and cursor: the normal screen (with scrollback) or the alternate one.
export class Grid {
  // the rows top to bottom, starting at base: a whole-screen scroll moves base instead of every row
  private ring: Row[];
  private base = 0;
  readonly kept: KeptRow[] = [];
  x = 0;
  y = 0;
  // the scroll region, 0-based rows, inclusive
  top = 0;
  bottom: number;
  // rows scrolled up since the counter was last reset, for telling new content from a redraw
  scrolls = 0;

  constructor(
    public cols: number,
    public height: number,
    // how many rows it keeps once they scroll off
    readonly scrollback: number,
  ) {
    this.ring = Array.from({ length: height }, () => new Row(cols));
    this.bottom = height - 1;
  }

  // The rows top to bottom.
  get rows(): Row[] {
    if (this.base !== 0) {
      this.ring = [...this.ring.slice(this.base), ...this.ring.slice(0, this.base)];
      this.base = 0;
    }
    return this.ring;
  }

  set rows(rows: Row[]) {
    this.ring = rows;
    this.base = 0;
  }

  // The cursor's row.
  get row(): Row {
    return this.rowAt(this.y);
  }

  rowAt(y: number): Row {
    const at = this.base + y;
    return this.ring[at < this.height ? at : at - this.height]!;
  }

  // How many kept rows there are: at most the scrollback asked for.
  get keptLength(): number {
    return Math.min(this.kept.length, this.scrollback);
  }

  // How many kept rows and rows on the screen there are: the row numbers line() takes.
  get length(): number {
    return this.keptLength + this.height;
  }

  // A row by its number counted from the oldest kept row.
  line(n: number): { text: string; wrapped: boolean; full: (width: number) => string } | undefined {
    if (n < 0 || n >= this.length) return undefined;
    const keptLength = this.keptLength;
    if (n < keptLength) {
      const kept = this.kept[this.kept.length - keptLength + n]!;
      return { text: kept.text, wrapped: kept.wrapped, full: () => kept.text + " ".repeat(kept.blanks) };
    }
    const row = this.rowAt(n - keptLength);
    return { text: row.text(), wrapped: row.wrapped, full: (width) => row.fullText(width) };
  }

  // The content moves up n rows within the scroll region; on the normal screen, with the region at the top, the
  // rows a line feed pushes out are kept.
  scrollUp(n: number, lineFeed = true): void {
    const count = Math.min(n, this.bottom - this.top + 1);
    const whole = this.top === 0 && this.bottom === this.height - 1;
    const rows = whole ? this.ring : this.rows;
    for (let i = 0; i < count; i++) {
      const gone = whole ? rows[this.base]! : rows[this.top]!;
      if (lineFeed && this.top === 0 && this.scrollback > 0) this.keep(gone);
      // the row that left comes back, blank, at the bottom of the region
      gone.clear();
      gone.wrapped = false;
      if (whole) this.base = this.base + 1 === this.height ? 0 : this.base + 1;
      else {
        rows.copyWithin(this.top, this.top + 1, this.bottom + 1);
        rows[this.bottom] = gone;
      }
    }
    if (lineFeed) this.scrolls += count;
  }

  scrollDown(n: number): void {
    this.blanksIn(this.top, n);
  }

  // A line feed: the row it moves to is not a continuation of the one above, whatever it was before.
  lineFeed(): void {
    if (this.y === this.bottom) this.scrollUp(1);
    else if (this.y < this.height - 1) {
      this.y++;
      this.row.wrapped = false;
    }
  }

  reverseIndex(): void {
    if (this.y === this.top) this.scrollDown(1);
    else if (this.y > 0) this.y--;
  }

  // Lines inserted or deleted at the cursor's row, within the scroll region.
  insertLines(n: number): void {
    if (this.y < this.top || this.y > this.bottom) return;
    this.blanksIn(this.y, n);
    this.x = 0;
  }

  deleteLines(n: number): void {
    if (this.y < this.top || this.y > this.bottom) return;
    const rows = this.rows;
    for (let i = Math.min(n, this.bottom - this.y + 1); i > 0; i--) {
      rows.splice(this.y, 1);
      rows.splice(this.bottom, 0, new Row(this.cols));
    }
    this.x = 0;
  }

  // Erase in display: 0 below the cursor, 1 above it, 2 all, 3 the kept rows.
  eraseDisplay(mode: number): void {
    const x = Math.min(this.x, this.cols - 1);
    if (mode === 0) {
      this.eraseLine(0);
      for (let y = this.y + 1; y < this.height; y++) this.blankRow(y);
    } else if (mode === 1) {
      for (let y = 0; y < this.y; y++) this.blankRow(y);
      this.row.erase(0, x + 1);
    } else if (mode === 2) {
      for (let y = 0; y < this.height; y++) this.blankRow(y);
    } else if (mode === 3) {
      this.kept.length = 0;
    }
  }

  // Erase in line: 0 from the cursor on, 1 up to it, 2 the whole row.
  eraseLine(mode: number): void {
    const x = Math.min(this.x, this.cols - 1);
    const row = this.row;
    if (mode === 0) {
      // from the cursor on: nothing when it waits past the last column
      row.erase(this.x, this.cols);
      if (x === 0) row.wrapped = false;
    } else if (mode === 1) row.erase(0, x + 1);
    else if (mode === 2) {
      row.clear();
      row.wrapped = false;
    }
  }

  resize(cols: number, height: number): void {
    for (const row of this.rows) row.widen(cols);
    if (height < this.height) {
      // blank rows below the cursor go first, then rows at the top leave as if scrolled off
      for (let y = this.height - 1; y > this.y && this.rows.length > height; y--) {
        if (this.rows[y]!.length === 0) this.rows.splice(y, 1);
      }
      while (this.rows.length > height) {
        const gone = this.rows.shift()!;
        if (this.scrollback > 0) this.keep(gone);
        this.y = Math.max(0, this.y - 1);
      }
    } else {
      for (let i = this.height; i < height; i++) {
        // on the normal screen, kept rows come back down into view, as a terminal shows more of its history
        const back = this.scrollback > 0 ? this.kept.pop() : undefined;
        if (back) {
          const row = new Row(cols);
          for (const char of back.text) {
            const codePoint = char.codePointAt(0)!;
            if (row.length < cols) row.write(row.length, codePoint, 1);
          }
          row.wrapped = back.wrapped;
          this.rows.unshift(row);
          this.y++;
        } else this.rows.push(new Row(cols));
      }
    }
    this.cols = cols;
    this.height = height;
    this.top = 0;
    this.bottom = height - 1;
    this.x = Math.min(this.x, cols - 1);
    this.y = Math.min(this.y, height - 1);
  }

  // Everything gone: rows, kept rows, cursor and region.
  reset(): void {
    this.rows = Array.from({ length: this.height }, () => new Row(this.cols));
    this.kept.length = 0;
    this.x = 0;
    this.y = 0;
    this.top = 0;
    this.bottom = this.height - 1;
  }

  // --- internal ---

  // n blank rows come in at row `from`, pushing the rows below down; those pushed past the region's bottom are gone.
  private blanksIn(from: number, n: number): void {
    const rows = this.rows;
    for (let i = Math.min(n, this.bottom - from + 1); i > 0; i--) {
      rows.splice(this.bottom, 1);
      rows.splice(from, 0, new Row(this.cols));
    }
  }

  private blankRow(y: number): void {
    const row = this.rowAt(y);
    row.clear();
    row.wrapped = false;
  }

  private keep(row: Row): void {
    this.kept.push({ text: row.text(), wrapped: row.wrapped, blanks: Math.max(0, this.cols - row.textWidth()) });
    // trimmed in steps, so keeping a row costs the same however long the history is
    if (this.kept.length > this.scrollback + 1024) this.kept.splice(0, this.kept.length - this.scrollback);
  }
}

// --- internal ---

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// UTF-16 code units as a string, in one native conversion where the machine stores them as UTF-16LE does.
function fromCodes(codes: Uint16Array, length: number): string {
  if (LITTLE_ENDIAN) return Buffer.from(codes.buffer, codes.byteOffset, length * 2).toString("utf16le");
  let text = "";
  for (let at = 0; at < length; at += 4096) {
    text += String.fromCharCode.apply(null, codes.subarray(at, Math.min(at + 4096, length)) as unknown as number[]);
  }
  return text;
}
