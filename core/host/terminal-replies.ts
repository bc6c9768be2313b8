// What a read of the user's terminal holds: the user's keys, or a reply of the terminal's own to an agent's query.
// Replies are string sequences (DCS, OSC, APC, PM, SOS, after an escape or as C1 controls) and reports (cursor
// position, device attributes and status, modes, window size, focus, the kitty keyboard flags). A terminal writes
// each reply whole, in one write: a read that holds one, or part of one, is no typing at all.

// A key or keys of a read: characters typed (or pasted, between a bracketed paste's markers), or one key sequence
// (an arrow, a function key, Alt and a key, Esc).
export type InputPiece = { kind: "text"; text: string; pasted: boolean } | { kind: "key"; sequence: string };

export interface ScannedRead {
  // the read holds a reply of the terminal's, or goes on with one an earlier read began
  reply: boolean;
  // the keys of a read that is no reply, in order; none for a reply
  pieces: InputPiece[];
}

// the most characters of a string sequence: one that never ends gives back the keys typed after it
export const STRING_LIMIT = 4096;
// the most characters a CSI or SS3 sequence is read in
const SEQUENCE_LIMIT = 128;
const PASTE_START = "\x1b[200~";
const PASTE_END = "\x1b[201~";
// what begins a sequence: an escape, or the C1 controls that begin a CSI or a string
const SEQUENCE_START = /[\x1b\x90\x98\x9b\x9d\x9e\x9f]/g;
// DCS, SOS, OSC, PM and APC: the character after an escape, and the C1 control
const STRING_AFTER_ESCAPE = new Set(["P", "X", "]", "^", "_"]);
const STRING_C1 = new Set(["\x90", "\x98", "\x9d", "\x9e", "\x9f"]);
const CSI = /^(?:\x1b\[|\x9b)([0-?]*)([ -/]*)([@-~])/;
const CSI_CUT = /^(?:\x1b\[|\x9b)[0-?]*[ -/]*$/;
const SS3 = /^\x1bO[@-~]/;
const PRIVATE_MARKER = /^[?>=]/;

// a cut CSI that bears a private marker is a report already (see isReport)
type Sequence = { kind: "key" | "report" | "string"; length: number } | { kind: "cut"; length: number; report: boolean };

// Reads the user's terminal one read at a time, with what a read's end cut short carried to the next.
export class TerminalReads {
  // a key sequence cut by the end of the last read
  private cut = "";
  // inside a string sequence the last read's end cut: its length so far
  private inString: number | undefined;
  private pasting = false;
  // the keys of a read that ended in a cut sequence: they count once the sequence turns out to be no reply
  private deferred: InputPiece[] = [];

  // True when no key sequence is cut short and no paste is under way (a reply cut short is not the user's input).
  get idle(): boolean {
    return (this.cut === "" || this.inString !== undefined) && !this.pasting;
  }

  // One read, decoded: whether it is a reply, and its keys if it is not.
  scan(read: string): ScannedRead {
    const text = this.cut + read;
    this.cut = "";
    const pieces = this.deferred;
    this.deferred = [];
    // an escape and a string's introducer alone in a read are Alt and a key: a terminal writes a reply whole
    if (this.inString === undefined && text.length === 2 && text[0] === "\x1b" && STRING_AFTER_ESCAPE.has(text[1]!)) {
      return { reply: false, pieces: [...pieces, { kind: "key", sequence: text }] };
    }
    let reply = this.inString !== undefined;
    let at = reply ? this.skipString(text, 0) : 0;
    while (at < text.length && this.cut === "") {
      const start = nextSequence(text, at);
      if (start > at) pieces.push({ kind: "text", text: text.slice(at, start), pasted: this.pasting });
      if (start === text.length) break;
      const sequence = readSequence(text, start);
      if (sequence.kind === "cut") {
        this.cut = text.slice(start);
        reply ||= sequence.report && !this.pasting;
      }
      else if (sequence.kind === "string" && !this.pasting) {
        reply = true;
        this.inString = 0;
        at = this.skipString(text, start + sequence.length);
        continue;
      } else if (sequence.kind === "report") reply ||= !this.pasting;
      // a string's introducer in a paste is the pasted text's, left out like any other sequence in it
      else this.press(text.slice(start, start + sequence.length), pieces);
      at = start + sequence.length;
    }
    if (reply) return { reply, pieces: [] };
    if (this.cut !== "") {
      this.deferred = pieces;
      return { reply, pieces: [] };
    }
    return { reply, pieces };
  }

  private press(sequence: string, pieces: InputPiece[]): void {
    if (sequence === PASTE_START) this.pasting = true;
    else if (sequence === PASTE_END) this.pasting = false;
    else pieces.push({ kind: "key", sequence });
  }

  // Skips a string's content from `from`: past its terminator (ST, BEL, or CAN and SUB, which cancel it), up to an
  // escape that begins something else, or up to STRING_LIMIT; a string the read's end cuts goes on in the next read.
  private skipString(text: string, from: number): number {
    let length = this.inString ?? 0;
    let at = from;
    for (; at < text.length && length < STRING_LIMIT; at++, length++) {
      const char = text[at]!;
      if (char === "\x07" || char === "\x9c" || char === "\x18" || char === "\x1a") {
        this.inString = undefined;
        return at + 1;
      }
      if (char !== "\x1b") continue;
      if (at + 1 === text.length) {
        // ST's escape without its backslash yet
        this.cut = "\x1b";
        this.inString = length;
        return text.length;
      }
      this.inString = undefined;
      return text[at + 1] === "\\" ? at + 2 : at;
    }
    this.inString = length < STRING_LIMIT ? length : undefined;
    return at;
  }
}

// --- internal ---

function nextSequence(text: string, from: number): number {
  SEQUENCE_START.lastIndex = from;
  return SEQUENCE_START.exec(text)?.index ?? text.length;
}

// The sequence that begins at `at` (an escape or a C1 control): how long it is and what it is; a CSI or SS3 the
// read's end cuts before its final character is "cut".
function readSequence(text: string, at: number): Sequence {
  const first = text[at]!;
  if (STRING_C1.has(first)) return { kind: "string", length: 1 };
  const second = text[at + 1];
  if (first === "\x1b" && second !== undefined && STRING_AFTER_ESCAPE.has(second)) return { kind: "string", length: 2 };
  const rest = text.slice(at, at + SEQUENCE_LIMIT);
  const atEnd = at + rest.length === text.length;
  if (first === "\x9b" || second === "[") {
    const csi = CSI.exec(rest);
    if (csi) return { kind: isReport(csi[1]!, csi[2]!, csi[3]!) ? "report" : "key", length: csi[0].length };
    if (atEnd && CSI_CUT.test(rest)) return { kind: "cut", length: rest.length, report: PRIVATE_MARKER.test(rest.slice(first === "\x9b" ? 1 : 2)) };
    return { kind: "key", length: first === "\x9b" ? 1 : 2 };
  }
  if (second === "O") {
    if (SS3.test(rest)) return { kind: "key", length: 3 };
    if (atEnd && rest.length === 2) return { kind: "cut", length: 2, report: false };
  }
  // Esc alone, or Alt and a key (an escape after it begins a sequence of its own)
  if (second === undefined || second === "\x1b") return { kind: "key", length: 1 };
  return { kind: "key", length: 1 + String.fromCodePoint(text.codePointAt(at + 1)!).length };
}

// Whether a CSI is one a terminal sends of its own: cursor position (R), device attributes and other reports with
// a private marker (?, >, =: DA1, DA2, DECXCPR, DECRPM, the kitty keyboard flags), device status (n), window
// reports (t), ANSI-mode DECRPM ($y), focus in and out (I, O). No key is sent as any of these.
function isReport(parameters: string, intermediates: string, final: string): boolean {
  if (PRIVATE_MARKER.test(parameters)) return true;
  if (intermediates === "$" && final === "y") return true;
  if (intermediates !== "") return false;
  if (final === "R") return /^\d+;\d+$/.test(parameters);
  if (final === "n" || final === "t") return true;
  return (final === "I" || final === "O") && parameters === "";
}
