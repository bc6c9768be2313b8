import { charWidth } from "./char-width.js";
import { Grid } from "./text-grid.js";
import { NO_MODES, type TerminalModes } from "./tty.js";

// What the screen model hears of the agent's output besides the text: line feeds, switches between the normal
// and the alternate screen, and replies a terminal sends to queries.
export interface VtEvents {
  lineFeed?(): void;
  // called before the alternate screen is left (its content is still there), and after each switch
  leavingAlt?(): void;
  switched?(alt: boolean): void;
  reply?(data: string): void;
}

// parser states
const GROUND = 0;
const ESCAPE = 1;
// an escape with an intermediate byte (a character set, a line size): its last byte is read and dropped
const ESCAPE_SKIP = 2;
const CSI = 3;
// a string (OSC, APC, PM, SOS) read to its end and dropped
const STRING = 4;
// a device control string, of which only a short request for a setting is kept
const DCS = 5;

const MAX_PARAMS = 32;
const MAX_PARAM = 65_535;
const MAX_DCS = 64;
const MOUSE_MODES = new Set([9, 1000, 1002, 1003]);

// The agent's output, byte by byte, applied to a text grid: a terminal emulator for reading, not for drawing.
export class VtStream {
  readonly normal: Grid;
  readonly alt: Grid;
  grid: Grid;
  private readonly events: VtEvents;
  private state = GROUND;
  // a UTF-8 character cut by a chunk's end: its code point so far and how many bytes it still needs
  private codePoint = 0;
  private needed = 0;
  private params = new Int32Array(MAX_PARAMS);
  private paramCount = 0;
  private prefix = 0;
  private intermediate = 0;
  private stringEscape = false;
  private dcs = "";
  private afterC2 = false;
  private lastPrinted = 0;
  private saved: { normal: Cursor; alt: Cursor } = { normal: HOME, alt: HOME };
  private tabs: Uint8Array;
  private readonly flags = { originMode: false, autowrap: true, insert: false, newline: false };
  private kittyDepth = 0;
  readonly modes: TerminalModes = { ...NO_MODES };

  constructor(cols: number, rows: number, scrollback: number, events: VtEvents = {}) {
    this.normal = new Grid(cols, rows, scrollback);
    this.alt = new Grid(cols, rows, 0);
    this.grid = this.normal;
    this.events = events;
    this.tabs = defaultTabs(cols);
  }

  write(data: Uint8Array): void {
    const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const length = bytes.length;
    let i = 0;
    while (i < length) {
      const byte = bytes[i]!;
      if (this.state === GROUND) {
        if (byte >= 0x20 && byte < 0x7f && this.needed === 0) {
          let end = i + 1;
          while (end < length && bytes[end]! >= 0x20 && bytes[end]! < 0x7f) end++;
          this.printAscii(bytes, i, end);
          i = end;
          continue;
        }
        if (byte >= 0x80 || this.needed > 0) this.decode(byte);
        else this.control(byte);
      } else if (this.state === CSI) this.csiByte(byte);
      else if (this.state === ESCAPE) this.escape(byte);
      else if (this.state === STRING || this.state === DCS) this.stringByte(byte);
      else this.state = GROUND;
      i++;
    }
  }

  // Where parsing a batch of output may begin: past a beginning of plain text (no escape sequences, nothing but
  // line feeds, returns, tabs and backspaces) that is followed by more lines than the screen and its history hold.
  // Those lines push everything before them out of both, so the screen after the batch is the same whether the
  // beginning is parsed or passed over; passing over it lets a flood of output through at the terminal's speed.
  // 0 when the batch does not allow it.
  passOver(bytes: Buffer): number {
    const grid = this.grid;
    if (this.state !== GROUND || this.needed > 0 || grid !== this.normal || grid.top !== 0 || grid.bottom !== grid.height - 1) return 0;
    const lines = grid.scrollback + grid.height;
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
    grid.reset();
    grid.y = grid.height - 1;
    grid.scrolls += lines;
    this.lastPrinted = 0;
    return end;
  }

  resize(cols: number, rows: number): void {
    this.normal.resize(cols, rows);
    this.alt.resize(cols, rows);
    const tabs = defaultTabs(cols);
    tabs.set(this.tabs.subarray(0, Math.min(cols, this.tabs.length)));
    this.tabs = tabs;
  }

  // --- internal ---

  private printAscii(bytes: Buffer, from: number, to: number): void {
    this.lastPrinted = bytes[to - 1]!;
    if (this.flags.insert) {
      for (let i = from; i < to; i++) this.print(bytes[i]!, 1);
      return;
    }
    const grid = this.grid;
    let i = from;
    while (i < to) {
      if (grid.x >= grid.cols) this.wrap();
      const n = Math.min(to - i, grid.cols - grid.x);
      grid.row.writeBytes(bytes, i, i + n, grid.x);
      grid.x += n;
      i += n;
      // without autowrap the last column is written over and over
      if (!this.flags.autowrap && grid.x >= grid.cols && i < to) {
        grid.x = grid.cols - 1;
        grid.row.writeBytes(bytes, to - 1, to, grid.x);
        grid.x = grid.cols;
        break;
      }
    }
  }

  private print(codePoint: number, width: number): void {
    const grid = this.grid;
    if (width === 0) {
      // a mark joins the character before the cursor
      const x = Math.min(grid.x, grid.cols) - 1;
      if (x >= 0) grid.row.join(grid.row.cells[x] === 1 && x > 0 ? x - 1 : x, String.fromCodePoint(codePoint));
      return;
    }
    if (grid.x + width > grid.cols) {
      if (this.flags.autowrap) this.wrap();
      else {
        // without autowrap the last column is written over; a wide character does not fit there
        grid.x = grid.cols - 1;
        if (width === 2) return;
      }
    }
    if (width > grid.cols) return;
    if (this.flags.insert) grid.row.insert(grid.x, width, grid.cols);
    grid.row.write(grid.x, codePoint, width);
    grid.x += width;
    this.lastPrinted = codePoint;
  }

  private wrap(): void {
    const grid = this.grid;
    if (!this.flags.autowrap) {
      grid.x = grid.cols - 1;
      return;
    }
    grid.x = 0;
    grid.lineFeed();
    grid.row.wrapped = true;
  }

  private decode(byte: number): void {
    if (this.needed > 0) {
      if ((byte & 0xc0) === 0x80) {
        this.codePoint = (this.codePoint << 6) | (byte & 0x3f);
        if (--this.needed === 0) this.character(this.codePoint);
        return;
      }
      // a broken sequence: what came so far is one unknown character, the byte starts afresh
      this.needed = 0;
      this.character(0xfffd);
      if (byte < 0x80) return byte >= 0x20 && byte < 0x7f ? this.print(byte, 1) : this.control(byte);
    }
    if (byte >= 0xf0 && byte < 0xf8) (this.codePoint = byte & 0x07), (this.needed = 3);
    else if (byte >= 0xe0) (this.codePoint = byte & 0x0f), (this.needed = 2);
    else if (byte >= 0xc0) (this.codePoint = byte & 0x1f), (this.needed = 1);
    else this.character(0xfffd);
  }

  private character(codePoint: number): void {
    // C1 controls sent as characters act as their escape sequences
    if (codePoint >= 0x80 && codePoint < 0xa0) return this.escape(codePoint - 0x40);
    if (codePoint > 0x10ffff || (codePoint >= 0xd800 && codePoint < 0xe000)) codePoint = 0xfffd;
    this.print(codePoint, charWidth(codePoint));
  }

  private control(byte: number): void {
    const grid = this.grid;
    if (byte === 0x1b) {
      this.state = ESCAPE;
      return;
    }
    this.lastPrinted = 0;
    switch (byte) {
      case 0x0d:
        grid.x = 0;
        return;
      case 0x0a:
      case 0x0b:
      case 0x0c:
        if (this.flags.newline) grid.x = 0;
        return this.lineFeed();
      case 0x08:
        // from past the last column (a wrap pending) back onto the one before the last
        grid.x = Math.max(0, Math.min(grid.x, grid.cols - 1) - 1);
        return;
      case 0x09:
        return this.tab(1);
      default:
      // BEL, SO, SI and the other controls draw nothing
    }
  }

  private lineFeed(): void {
    this.grid.lineFeed();
    this.events.lineFeed?.();
  }

  private tab(count: number): void {
    const grid = this.grid;
    // a wrap pending stays pending
    if (grid.x >= grid.cols) return;
    let x = grid.x;
    for (let n = 0; n < count && x < grid.cols - 1; n++) {
      x++;
      while (x < grid.cols - 1 && !this.tabs[x]) x++;
    }
    grid.x = x;
  }

  private escape(byte: number): void {
    this.state = GROUND;
    const grid = this.grid;
    if (byte !== 0x5b) this.lastPrinted = 0;
    switch (byte) {
      case 0x5b: // [
        this.state = CSI;
        this.paramCount = 0;
        this.params[0] = 0;
        this.prefix = 0;
        this.intermediate = 0;
        return;
      case 0x5d: // ]
      case 0x58: // X
      case 0x5e: // ^
      case 0x5f: // _
        this.state = STRING;
        this.stringEscape = false;
        return;
      case 0x50: // P
        this.state = DCS;
        this.dcs = "";
        this.stringEscape = false;
        return;
      case 0x37: // 7
        return this.saveCursor();
      case 0x38: // 8
        return this.restoreCursor();
      case 0x44: // D
        return this.lineFeed();
      case 0x45: // E
        grid.x = 0;
        return this.lineFeed();
      case 0x4d: // M
        return grid.reverseIndex();
      case 0x48: // H
        this.tabs[Math.min(grid.x, grid.cols - 1)] = 1;
        return;
      case 0x63: // c
        return this.reset();
      case 0x3d: // =
        this.modes.applicationKeypad = true;
        return;
      case 0x3e: // >
        this.modes.applicationKeypad = false;
        return;
      case 0x1b:
        this.state = ESCAPE;
        return;
      default:
        // ( ) * + - . / # % and space take one more byte
        if (byte >= 0x20 && byte < 0x30) this.state = ESCAPE_SKIP;
        else if (byte < 0x20) this.control(byte);
    }
  }

  private csiByte(byte: number): void {
    if (byte >= 0x30 && byte <= 0x39) {
      const n = this.paramCount === 0 ? 0 : this.paramCount - 1;
      if (this.paramCount === 0) this.paramCount = 1;
      this.params[n] = Math.min(MAX_PARAM, this.params[n]! * 10 + byte - 0x30);
    } else if (byte === 0x3b || byte === 0x3a) {
      if (this.paramCount === 0) this.paramCount = 1;
      if (this.paramCount < MAX_PARAMS) this.params[this.paramCount++] = 0;
    } else if (byte >= 0x3c && byte <= 0x3f) {
      this.prefix = byte;
    } else if (byte >= 0x20 && byte <= 0x2f) {
      this.intermediate = byte;
    } else if (byte >= 0x40 && byte <= 0x7e) {
      this.state = GROUND;
      this.dispatch(byte);
    } else if (byte === 0x1b) {
      this.state = ESCAPE;
    } else if (byte === 0x18 || byte === 0x1a) {
      this.state = GROUND;
    } else if (byte < 0x20) {
      this.control(byte);
    }
  }

  private stringByte(byte: number): void {
    const c2 = this.afterC2;
    this.afterC2 = byte === 0xc2;
    if (this.stringEscape) {
      this.stringEscape = false;
      if (byte === 0x5c) return this.endString();
    }
    if (byte === 0x1b) {
      this.stringEscape = true;
      return;
    }
    if (byte === 0x07 || byte === 0x18 || byte === 0x1a || (c2 && byte === 0x9c)) {
      if (byte === 0x07 || byte === 0x9c) this.endString();
      this.state = GROUND;
      return;
    }
    if (this.state === DCS && this.dcs.length < MAX_DCS) this.dcs += String.fromCharCode(byte);
  }

  private endString(): void {
    if (this.state === DCS && this.dcs.startsWith("$q")) this.reportSetting(this.dcs.slice(2));
    this.state = GROUND;
  }

  private param(n: number, fallback: number): number {
    return n < this.paramCount && this.params[n]! > 0 ? this.params[n]! : fallback;
  }

  private dispatch(final: number): void {
    const grid = this.grid;
    // only a character printed just before is repeated (CSI b)
    const lastPrinted = this.lastPrinted;
    this.lastPrinted = 0;
    const prefix = this.prefix;
    const p = this.param(0, 1);
    if (prefix === 0x3f) return this.privateSequence(final);
    if (prefix === 0x3e || prefix === 0x3c || prefix === 0x3d) return this.markedSequence(prefix, final);
    if (this.intermediate !== 0) return this.intermediateSequence(final);
    switch (final) {
      case 0x40: // @ insert characters
        return grid.row.insert(Math.min(grid.x, grid.cols - 1), Math.min(p, grid.cols), grid.cols);
      case 0x41: // A up
        return this.moveTo(grid.x, grid.y - p, true);
      case 0x42: // B down
      case 0x65: // e
        return this.moveTo(grid.x, grid.y + p, true);
      case 0x43: // C forward
      case 0x61: // a
        return this.moveTo(grid.x + p, grid.y, false);
      case 0x44: // D back
        return this.moveTo(Math.min(grid.x, grid.cols - 1) - p, grid.y, false);
      case 0x45: // E next line
        return this.moveTo(0, grid.y + p, true);
      case 0x46: // F previous line
        return this.moveTo(0, grid.y - p, true);
      case 0x47: // G column
      case 0x60: // `
        return this.moveTo(p - 1, grid.y, false);
      case 0x48: // H position
      case 0x66: // f
        return this.position(this.param(0, 1), this.param(1, 1));
      case 0x49: // I tab forward
        return this.tab(Math.min(p, grid.cols));
      case 0x4a: // J erase in display
        return grid.eraseDisplay(this.param(0, 0));
      case 0x4b: // K erase in line
        return grid.eraseLine(this.param(0, 0));
      case 0x4c: // L insert lines
        return grid.insertLines(Math.min(p, grid.height));
      case 0x4d: // M delete lines
        return grid.deleteLines(Math.min(p, grid.height));
      case 0x50: // P delete characters
        return grid.row.delete(Math.min(grid.x, grid.cols - 1), Math.min(p, grid.cols));
      case 0x53: // S scroll up: the rows that leave are gone, as a terminal's history does not take them
        return grid.scrollUp(Math.min(p, grid.height), false);
      case 0x54: // T scroll down
        return grid.scrollDown(Math.min(p, grid.height));
      case 0x58: {
        // X erase characters (none when the cursor waits past the last column)
        return grid.row.erase(grid.x, grid.x + Math.min(p, grid.cols));
      }
      case 0x5a: // Z tab back
        return this.moveTo(backTab(this.tabs, Math.min(grid.x, grid.cols - 1), Math.min(p, grid.cols)), grid.y, false);
      case 0x62: // b repeat the last character
        for (let n = lastPrinted ? Math.min(p, grid.cols * grid.height) : 0; n > 0; n--) this.print(lastPrinted, charWidth(lastPrinted));
        this.lastPrinted = 0;
        return;
      case 0x63: // c device attributes
        if (this.param(0, 0) === 0) this.reply("\x1b[?1;2c");
        return;
      case 0x64: // d row
        return this.position(p, this.cursorColumn());
      case 0x67: // g clear tab stops
        if (this.param(0, 0) === 0) this.tabs[Math.min(grid.x, grid.cols - 1)] = 0;
        else if (this.param(0, 0) === 3) this.tabs.fill(0);
        return;
      case 0x68: // h set mode
      case 0x6c: // l reset mode
        for (let n = 0; n < this.paramCount; n++) {
          if (this.params[n] === 4) this.flags.insert = final === 0x68;
          else if (this.params[n] === 20) this.flags.newline = final === 0x68;
        }
        return;
      case 0x6e: // n device status
        if (this.param(0, 0) === 5) this.reply("\x1b[0n");
        else if (this.param(0, 0) === 6) this.reply(`\x1b[${this.cursorRow()};${this.cursorColumn()}R`);
        return;
      case 0x72: {
        // r scroll region
        const top = this.param(0, 1) - 1;
        const bottom = Math.min(this.param(1, grid.height), grid.height) - 1;
        if (top < bottom) {
          grid.top = top;
          grid.bottom = bottom;
          this.position(1, 1);
        }
        return;
      }
      case 0x73: // s save cursor
        return this.saveCursor();
      case 0x75: // u restore cursor
        return this.restoreCursor();
      default:
      // colours (m) and the rest draw no text
    }
  }

  private privateSequence(final: number): void {
    if (final === 0x68 || final === 0x6c) {
      for (let n = 0; n < this.paramCount; n++) this.setPrivateMode(this.params[n]!, final === 0x68);
      return;
    }
    // answered: the cursor position and mode reports; a kitty keyboard query (CSI ? u) is not, as by a terminal
    // without that protocol
    if (final === 0x6e && this.param(0, 0) === 6) this.reply(`\x1b[?${this.cursorRow()};${this.cursorColumn()}R`);
    else if (final === 0x70 && this.intermediate === 0x24) {
      const mode = this.param(0, 0);
      this.reply(`\x1b[?${mode};${this.privateModeState(mode)}$y`);
    }
  }

  private markedSequence(prefix: number, final: number): void {
    if (prefix === 0x3e && final === 0x63 && this.param(0, 0) === 0) this.reply("\x1b[>0;276;0c");
    else if (prefix === 0x3e && final === 0x75) this.kittyDepth++;
    else if (prefix === 0x3c && final === 0x75) this.kittyDepth = Math.max(0, this.kittyDepth - this.param(0, 1));
    this.modes.kittyKeyboard = this.kittyDepth > 0;
  }

  private intermediateSequence(final: number): void {
    if (this.intermediate === 0x24 && final === 0x70) {
      const mode = this.param(0, 0);
      const state = mode === 4 ? (this.flags.insert ? 1 : 2) : mode === 20 ? (this.flags.newline ? 1 : 2) : 0;
      this.reply(`\x1b[${mode};${state}$y`);
    } else if (this.intermediate === 0x21 && final === 0x70) {
      // soft reset
      this.flags.originMode = false;
      this.flags.insert = false;
      this.flags.autowrap = true;
      this.grid.top = 0;
      this.grid.bottom = this.grid.height - 1;
    }
  }

  private setPrivateMode(mode: number, on: boolean): void {
    const modes = this.modes;
    switch (mode) {
      case 1:
        modes.applicationCursor = on;
        return;
      case 6:
        this.flags.originMode = on;
        return this.position(1, 1);
      case 7:
        this.flags.autowrap = on;
        return;
      case 25:
        modes.cursorHidden = !on;
        return;
      case 1004:
        modes.focus = on;
        return;
      case 2004:
        modes.bracketedPaste = on;
        return;
      case 1048:
        return on ? this.saveCursor() : this.restoreCursor();
      case 47:
      case 1047:
      case 1049:
        return this.switchScreen(mode, on);
      default:
        if (MOUSE_MODES.has(mode)) modes.mouse = on;
    }
  }

  private privateModeState(mode: number): number {
    const modes = this.modes;
    const states: Record<number, boolean> = {
      1: modes.applicationCursor,
      6: this.flags.originMode,
      7: this.flags.autowrap,
      25: !modes.cursorHidden,
      47: modes.altScreen,
      1047: modes.altScreen,
      1049: modes.altScreen,
      1004: modes.focus,
      2004: modes.bracketedPaste,
    };
    if (MOUSE_MODES.has(mode)) return modes.mouse ? 1 : 2;
    return mode in states ? (states[mode] ? 1 : 2) : 0;
  }

  // Entering the alternate screen blanks it; leaving it wipes it. The cursor keeps its place across a switch;
  // 1049 also saves it before entering and restores it after leaving, even when the screen was already the one
  // asked for.
  private switchScreen(mode: number, on: boolean): void {
    const { normal, alt } = this;
    if (on) {
      if (mode === 1049) this.saveCursor();
      if (this.modes.altScreen) return;
      alt.eraseDisplay(2);
      alt.x = normal.x;
      alt.y = Math.min(normal.y, alt.height - 1);
      this.grid = alt;
      this.modes.altScreen = true;
      this.events.switched?.(true);
      return;
    }
    if (this.modes.altScreen) {
      this.events.leavingAlt?.();
      normal.x = alt.x;
      normal.y = Math.min(alt.y, normal.height - 1);
      alt.reset();
      this.grid = normal;
      this.modes.altScreen = false;
      this.events.switched?.(false);
    }
    if (mode === 1049) this.restoreCursor();
  }

  // Moves the cursor, kept on the screen; up stops at the scroll region's top from anywhere below it, down at
  // its bottom from anywhere above it.
  private moveTo(x: number, y: number, vertical: boolean): void {
    const grid = this.grid;
    let top = 0;
    let bottom = grid.height - 1;
    if (vertical && y < grid.y && grid.y >= grid.top) top = grid.top;
    if (vertical && y > grid.y && grid.y <= grid.bottom) bottom = grid.bottom;
    grid.x = Math.max(0, Math.min(x, grid.cols - 1));
    grid.y = Math.max(top, Math.min(y, bottom));
  }

  // Row and column counted from 1, within the scroll region in origin mode.
  private position(row: number, column: number): void {
    const grid = this.grid;
    const origin = this.flags.originMode;
    const top = origin ? grid.top : 0;
    const bottom = origin ? grid.bottom : grid.height - 1;
    grid.y = Math.max(top, Math.min(top + row - 1, bottom));
    grid.x = Math.max(0, Math.min(column - 1, grid.cols - 1));
  }

  // The cursor's column counted from 1 (a wrap pending counts as the last column).
  private cursorColumn(): number {
    const grid = this.grid;
    return Math.min(grid.x, grid.cols - 1) + 1;
  }

  private cursorRow(): number {
    const grid = this.grid;
    return grid.y - (this.flags.originMode ? grid.top : 0) + 1;
  }

  private saveCursor(): void {
    const grid = this.grid;
    const cursor = { x: grid.x, y: grid.y };
    if (grid === this.alt) this.saved.alt = cursor;
    else this.saved.normal = cursor;
  }

  private restoreCursor(): void {
    const grid = this.grid;
    const cursor = grid === this.alt ? this.saved.alt : this.saved.normal;
    grid.x = Math.min(cursor.x, grid.cols);
    grid.y = Math.min(cursor.y, grid.height - 1);
  }

  private reportSetting(request: string): void {
    const grid = this.grid;
    if (request === "m") this.reply("\x1bP1$r0m\x1b\\");
    else if (request === "r") this.reply(`\x1bP1$r${grid.top + 1};${grid.bottom + 1}r\x1b\\`);
    else this.reply("\x1bP0$r\x1b\\");
  }

  private reply(data: string): void {
    this.events.reply?.(data);
  }

  private reset(): void {
    if (this.modes.altScreen) this.switchScreen(1049, false);
    this.normal.reset();
    this.alt.reset();
    Object.assign(this.modes, NO_MODES);
    Object.assign(this.flags, { originMode: false, autowrap: true, insert: false, newline: false });
    this.kittyDepth = 0;
    this.saved = { normal: HOME, alt: HOME };
    this.tabs = defaultTabs(this.normal.cols);
  }
}

// --- internal ---

interface Cursor {
  x: number;
  y: number;
}

const HOME: Cursor = { x: 0, y: 0 };

// Whether the first `end` bytes hold a C1 control written as a character (U+0080 to U+009F, which act as escapes).
function hasC1(bytes: Buffer, end: number): boolean {
  for (let at = bytes.indexOf(0xc2); at !== -1 && at < end - 1; at = bytes.indexOf(0xc2, at + 1)) {
    if (bytes[at + 1]! >= 0x80 && bytes[at + 1]! < 0xa0) return true;
  }
  return false;
}

function defaultTabs(cols: number): Uint8Array {
  const tabs = new Uint8Array(cols);
  for (let x = 8; x < cols; x += 8) tabs[x] = 1;
  return tabs;
}

function backTab(tabs: Uint8Array, x: number, count: number): number {
  for (let n = 0; n < count && x > 0; n++) {
    x--;
    while (x > 0 && !tabs[x]) x--;
  }
  return x;
}
