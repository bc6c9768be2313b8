// Rewrites the agent's own title sequences into uuldana's status line and drops its pushes and pops of the title
// stack (uuldana pushes once when a run starts and pops once when it ends); every other byte passes untouched.
// Sequences are read as terminals read them: ESC ] or C1 OSC (a raw 0x9d byte, or U+009D in UTF-8) starts one;
// BEL, ST (ESC \, 0x9c, U+009C), any other ESC or a C1 control ends it; CAN and SUB abandon it. A title is never let
// through raw, however long or unterminated: it is swallowed until it ends (or for 64 KiB at most), then
// uuldana's own title is written with the agent's part cut. A sequence split across chunks is held back until it
// is complete; a terminal shows nothing for an unfinished sequence either, so holding it has no visible effect.
const ESC = 0x1b;
const BEL = 0x07;
const CAN = 0x18;
const SUB = 0x1a;
const C1_CSI = 0x9b;
const C1_ST = 0x9c;
const C1_OSC = 0x9d;
// the UTF-8 lead byte of U+0080…U+00BF: terminals that decode UTF-8 honour U+009B, U+009C and U+009D as C1 controls
const C2 = 0xc2;

// digits of an OSC number read before it counts as a title anyway; bytes of a CSI held while it may be a push or pop
const MAX_NUMBER = 16;
const MAX_CSI = 256;
// bytes of an agent's title kept, bytes swallowed before an unterminated title counts as ended, characters shown
const MAX_TITLE_BYTES = 1024;
const MAX_TITLE_SWALLOW = 64 * 1024;
const MAX_TITLE_CHARS = 200;

export type TitleFormat = (agentTitle: string) => string;

interface OpenTitle {
  kind: string;
  body: Buffer[];
  kept: number;
  seen: number;
  // continuation bytes still expected of the UTF-8 character being read
  utf8: number;
}

// where reading goes on, and whether the sequence read is held (unfinished), dropped, or dropped as it comes
type Step = { next: number; hold?: true; drop?: true; overlong?: true };

export class TitleFilter {
  agentTitle = "";
  // the start of a sequence cut off at the end of the last chunk, read again with the next
  private held: Buffer | undefined;
  // inside an agent's title: its bytes are swallowed until it ends
  private title: OpenTitle | undefined;
  // inside an over-long push or pop of the title stack: dropped up to its final byte
  private dropping = false;
  // the last bytes before the current chunk, to tell a C1 byte from part of a UTF-8 character
  private before = Buffer.alloc(0);

  constructor(private readonly format: TitleFormat) {}

  // Returns what to write now; an unfinished sequence stays held for the next chunk.
  filter(chunk: Buffer): Buffer {
    const data = this.held ? Buffer.concat([this.held, chunk]) : chunk;
    this.held = undefined;
    // most chunks hold no escape and no C1 byte at all
    if (!this.title && !this.dropping && data.indexOf(ESC) === -1 && data.indexOf(C1_OSC) === -1 && data.indexOf(C1_CSI) === -1) {
      // a lone UTF-8 lead byte at the end may become U+009B or U+009D with the next chunk
      if (data[data.length - 1] !== C2) {
        this.finish(data, data.length);
        return data;
      }
      this.held = Buffer.from([C2]);
      this.finish(data, data.length - 1);
      return data.subarray(0, data.length - 1);
    }
    return this.scan(data);
  }

  // The agent's output has ended: an unfinished sequence is dropped, never written raw.
  end(): void {
    this.held = undefined;
    this.title = undefined;
    this.dropping = false;
  }

  private scan(data: Buffer): Buffer {
    const out: Buffer[] = [];
    let from = 0;
    let at = 0;
    const next = { esc: -2, osc: -2, csi: -2 };
    const pass = (to: number): void => {
      if (to > from) out.push(data.subarray(from, to));
    };
    const stop = (holdFrom: number): Buffer => {
      if (holdFrom < data.length) this.held = Buffer.from(data.subarray(holdFrom));
      this.finish(data, holdFrom);
      return out.length === 1 ? out[0]! : Buffer.concat(out);
    };
    for (;;) {
      if (this.title) {
        const step = this.readTitle(data, at, out);
        if (step.hold) return stop(step.next);
        if (this.title) return stop(data.length);
        from = at = step.next;
        continue;
      }
      if (this.dropping) {
        const end = dropRest(data, at);
        if (end === -1) return stop(data.length);
        this.dropping = false;
        from = at = end;
        continue;
      }
      const i = nextIntroducer(data, at, next);
      if (i === -1) {
        // a lone UTF-8 lead byte at the end may become U+009B or U+009D with the next chunk
        const keep = data[data.length - 1] === C2 && data.length - 1 >= from ? data.length - 1 : data.length;
        pass(keep);
        return stop(keep);
      }
      let start: number;
      let osc: boolean;
      if (data[i] === ESC) {
        if (i + 1 === data.length) {
          pass(i);
          return stop(i);
        }
        osc = data[i + 1] === 0x5d;
        if (!osc && data[i + 1] !== 0x5b) {
          at = i + 1;
          continue;
        }
        start = i;
      } else if (i - 1 >= at && data[i - 1] === C2) {
        start = i - 1;
        osc = data[i] === C1_OSC;
      } else if (this.partOfCharacter(data, i)) {
        at = i + 1;
        continue;
      } else {
        start = i;
        osc = data[i] === C1_OSC;
      }
      const body = data[i] === ESC ? i + 2 : i + 1;
      const step = osc ? this.openTitle(data, body) : readCsi(data, start, body);
      if (step.hold) {
        pass(start);
        return stop(start);
      }
      if (!this.title && !step.drop && !step.overlong) {
        at = step.next;
        continue;
      }
      pass(start);
      if (step.drop) {
        // C0 controls inside a sequence are carried out by the terminal; they stay
        const controls = [...data.subarray(start, step.next)].filter((byte) => byte < 0x20 && byte !== ESC && byte !== CAN && byte !== SUB);
        if (controls.length) out.push(Buffer.from(controls));
      }
      this.dropping = step.overlong === true;
      from = at = step.next;
    }
  }

  // Reads the number of an OSC sequence; a title opens this.title, anything else passes on.
  private openTitle(data: Buffer, at: number): Step {
    let end = at;
    while (end < data.length && end - at <= MAX_NUMBER && isDigit(data[end]!)) end++;
    const kind = (k: string, body: number): Step => {
      this.title = { kind: k, body: [], kept: 0, seen: 0, utf8: 0 };
      return { next: body };
    };
    // an absurdly long number cannot be told apart from a title's: treat it as one
    if (end - at > MAX_NUMBER) return kind("0", end);
    if (end === data.length) return { next: at, hold: true };
    const after = data[end]!;
    if (end === at) {
      // older forms some terminals still honour: an empty number, and "l" (title) or "L" (icon label) as in dtterm
      if (after === 0x3b) return kind("0", end + 1);
      if (after === 0x6c) return kind("2", end + 1);
      if (after === 0x4c) return kind("1", end + 1);
      return { next: end };
    }
    const number = Number(data.toString("latin1", at, end));
    if (number > 2) return { next: end };
    return kind(String(number), after === 0x3b ? end + 1 : end);
  }

  // Swallows the open title's bytes up to its end; when it ends, uuldana's own title goes out in its place.
  private readTitle(data: Buffer, at: number, out: Buffer[]): Step {
    const title = this.title!;
    const limit = Math.min(data.length, at + MAX_TITLE_SWALLOW - title.seen);
    const close = (end: number, next: number, set = true): Step => {
      this.keep(title, data.subarray(at, end));
      this.title = undefined;
      if (set) {
        this.agentTitle = clean(Buffer.concat(title.body), title.seen > title.kept);
        out.push(Buffer.from(`\x1b]${title.kind};${this.format(this.agentTitle)}\x07`));
      }
      return { next };
    };
    for (let j = at; j < limit; j++) {
      const byte = data[j]!;
      if (title.utf8 > 0 && (byte & 0xc0) === 0x80) {
        title.utf8--;
        continue;
      }
      title.utf8 = 0;
      if (byte === BEL) return close(j, j + 1);
      if (byte === CAN || byte === SUB) return close(j, j + 1, false);
      if (byte === ESC || byte === C2) {
        if (j + 1 === data.length) {
          this.keep(title, data.subarray(at, j));
          return { next: j, hold: true };
        }
        const second = data[j + 1]!;
        if (byte === ESC) return close(j, second === 0x5c ? j + 2 : j);
        if (second === C1_ST) return close(j, j + 2);
        if (startsSequence(second)) return close(j, j);
        // another C1 control is ignored inside a title; U+00A0…U+00BF is a character
        if (second >= 0x80 && second <= 0x9f) j++;
        else if (second >= 0xa0 && second <= 0xbf) title.utf8 = 1;
        continue;
      }
      if (byte >= 0x80 && byte <= 0x9f) {
        // a C1 byte that is no part of a character, as a terminal in 8-bit mode reads it
        if (byte === C1_ST) return close(j, j + 1);
        if (startsSequence(byte)) return close(j, j);
        continue;
      }
      title.utf8 = byte >= 0xf0 && byte <= 0xf4 ? 3 : byte >= 0xe0 && byte <= 0xef ? 2 : byte >= 0xc3 && byte <= 0xdf ? 1 : 0;
    }
    // the most a title may take: it counts as ended here, and what follows is output again
    if (limit < data.length || title.seen + (limit - at) >= MAX_TITLE_SWALLOW) return close(limit, limit);
    this.keep(title, data.subarray(at, limit));
    return { next: limit };
  }

  private keep(title: OpenTitle, bytes: Buffer): void {
    title.seen += bytes.length;
    const room = MAX_TITLE_BYTES - title.kept;
    if (room <= 0 || bytes.length === 0) return;
    const kept = Buffer.from(bytes.subarray(0, room));
    title.body.push(kept);
    title.kept += kept.length;
  }

  // True when the byte at i continues a UTF-8 character begun just before it (possibly in the last chunk).
  private partOfCharacter(data: Buffer, i: number): boolean {
    for (let k = 1; k <= 3; k++) {
      const byte = i - k >= 0 ? data[i - k] : this.before[this.before.length + i - k];
      if (byte === undefined) return false;
      if ((byte & 0xc0) === 0x80) continue;
      const length = byte >= 0xf0 && byte <= 0xf4 ? 4 : byte >= 0xe0 && byte <= 0xef ? 3 : byte >= 0xc2 && byte <= 0xdf ? 2 : 1;
      return length > k;
    }
    return false;
  }

  private finish(data: Buffer, upTo: number): void {
    if (upTo >= 3) this.before = Buffer.from(data.subarray(upTo - 3, upTo));
    else if (upTo > 0) this.before = Buffer.concat([this.before, data.subarray(0, upTo)]).subarray(-3);
  }
}

// --- internal ---

function isDigit(byte: number): boolean {
  return byte >= 0x30 && byte <= 0x39;
}

// C1 controls that begin a sequence of their own (CSI, OSC, DCS, SOS, PM, APC), ending a title under way
function startsSequence(byte: number): boolean {
  return byte === C1_CSI || byte === C1_OSC || byte === 0x90 || byte === 0x98 || byte === 0x9e || byte === 0x9f;
}

// The next ESC, 0x9b or 0x9d at or after at; the positions found are kept in next so that each is searched once.
function nextIntroducer(data: Buffer, at: number, next: { esc: number; osc: number; csi: number }): number {
  if (next.esc !== -1 && next.esc < at) next.esc = data.indexOf(ESC, at);
  if (next.osc !== -1 && next.osc < at) next.osc = data.indexOf(C1_OSC, at);
  if (next.csi !== -1 && next.csi < at) next.csi = data.indexOf(C1_CSI, at);
  let best = next.esc;
  if (next.osc !== -1 && (best === -1 || next.osc < best)) best = next.osc;
  if (next.csi !== -1 && (best === -1 || next.csi < best)) best = next.csi;
  return best;
}

// A CSI sequence from its parameters on: a push or pop of the title stack (first parameter 22 or 23, no
// intermediate, final "t") is dropped; anything else passes as soon as it is plainly something else.
function readCsi(data: Buffer, start: number, at: number): Step {
  // the first parameter's digits without leading zeros, and whether it has ended
  let first = "";
  let firstDone = false;
  let intermediate = false;
  const stack = (): boolean => first === "22" || first === "23";
  for (let j = at; j < data.length; j++) {
    if (j - start > MAX_CSI) return overlong(j);
    const byte = data[j]!;
    if (byte >= 0x40 && byte <= 0x7e) return stack() && byte === 0x74 && !intermediate ? { next: j + 1, drop: true } : { next: j + 1 };
    if (byte >= 0x30 && byte <= 0x3f) {
      if (firstDone) continue;
      if (isDigit(byte)) {
        if (first || byte !== 0x30) first += String.fromCharCode(byte);
        if (!"22".startsWith(first) && !"23".startsWith(first)) return { next: j + 1 };
      } else if (byte === 0x3b || byte === 0x3a) {
        firstDone = true;
        if (!stack()) return { next: j + 1 };
      } else return { next: j };
    } else if (byte >= 0x20 && byte <= 0x2f) {
      intermediate = true;
      if (!firstDone && !stack()) return { next: j + 1 };
      firstDone = true;
    } else if (byte === ESC || byte === CAN || byte === SUB || byte >= 0x80) return { next: j };
    // other C0 controls and DEL are carried out (or ignored) by the terminal without ending the sequence
  }
  return { next: start, hold: true };
}

// A push or pop that goes on past MAX_CSI: dropped whole, the rest of it as it comes.
function overlong(at: number): Step {
  return { next: at, overlong: true };
}

// The end of an over-long sequence being dropped: just after its final byte, at a byte that abandons it, or -1
// when the chunk ends first.
function dropRest(data: Buffer, at: number): number {
  for (let j = at; j < data.length; j++) {
    const byte = data[j]!;
    if (byte >= 0x40 && byte <= 0x7e) return j + 1;
    if (byte === ESC || byte === CAN || byte === SUB || byte >= 0x80) return j;
  }
  return -1;
}

// An agent's title as it may appear inside uuldana's: no control or direction-changing characters, cut to length.
function clean(bytes: Buffer, cut: boolean): string {
  let text = bytes.toString("utf8").replace(/[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/gu, "");
  if (cut) text = text.replace(/\uFFFD$/, "");
  const chars = Array.from(text);
  return cut || chars.length > MAX_TITLE_CHARS ? chars.slice(0, MAX_TITLE_CHARS).join("") + "…" : text;
}
