import { describe, expect, it } from "vitest";

import { STRING_LIMIT, TerminalReads } from "../core/host/terminal-replies.js";

// Each read scanned in turn: which were replies, and the text typed in the others.
function scan(reads: readonly string[]): { replies: boolean[]; typed: string; keys: string[] } {
  const terminal = new TerminalReads();
  const replies: boolean[] = [];
  let typed = "";
  const keys: string[] = [];
  for (const read of reads) {
    const scanned = terminal.scan(read);
    replies.push(scanned.reply);
    for (const piece of scanned.pieces) {
      if (piece.kind === "text") typed += piece.text;
      else keys.push(piece.sequence);
    }
  }
  return { replies, typed, keys };
}

const REPLIES = [
  ["DCS XTVERSION", "\x1bP>|tmux 3.3a\x1b\\"],
  ["DCS DECRQSS", "\x1bP1$r0;1m\x1b\\"],
  ["DCS XTGETTCAP", "\x1bP1+r544e=787465726d\x1b\\"],
  ["DCS ended with BEL", "\x1bP>|foot(1.16.2)\x07"],
  ["OSC 11 colour, ended with ST", "\x1b]11;rgb:1e1e/1e1e/1e1e\x1b\\"],
  ["OSC 10 colour, ended with BEL", "\x1b]10;rgb:ffff/ffff/ffff\x07"],
  ["APC kitty graphics", "\x1b_Gi=31;OK\x1b\\"],
  ["PM", "\x1b^a private message\x1b\\"],
  ["SOS", "\x1bXa start of string\x1b\\"],
  ["C1 DCS", "\u0090>|xterm(390)\u009c"],
  ["C1 OSC", "\u009d11;rgb:0000/0000/0000\u009c"],
  ["C1 OSC ended with BEL", "\u009d11;rgb:0000/0000/0000\x07"],
  ["C1 APC", "\u009fGi=1;OK\u009c"],
  ["C1 PM", "\u009ea private message\u009c"],
  ["C1 SOS", "\u0098a start of string\u009c"],
  ["C1 DCS ended with an escape's ST", "\u0090>|xterm(390)\x1b\\"],
  ["cursor position report", "\x1b[12;5R"],
  ["cursor position report with a page", "\x1b[?12;5;1R"],
  ["C1 cursor position report", "\u009b12;5R"],
  ["primary device attributes", "\x1b[?64;1c"],
  ["secondary device attributes", "\x1b[>0;276;0c"],
  ["device status", "\x1b[0n"],
  ["private device status", "\x1b[?997;1n"],
  ["DEC private mode report", "\x1b[?2004;1$y"],
  ["ANSI mode report", "\x1b[4;2$y"],
  ["window size report", "\x1b[8;24;80t"],
  ["focus in", "\x1b[I"],
  ["focus out", "\x1b[O"],
  ["kitty keyboard flags", "\x1b[?1u"],
  ["modify-keys report", "\x1b[>4;2m"],
] as const;

const KEYS = [
  ["arrow up", "\x1b[A"],
  ["arrow up in application mode", "\x1bOA"],
  ["Ctrl+Right", "\x1b[1;5C"],
  ["F3", "\x1bOR"],
  ["F5", "\x1b[15~"],
  ["Delete", "\x1b[3~"],
  ["Shift+Tab", "\x1b[Z"],
  ["a kitty keyboard key", "\x1b[97;5u"],
  ["an SGR mouse click", "\x1b[<0;10;5M"],
  ["Esc", "\x1b"],
  ["Alt+x", "\x1bx"],
  ["Alt+Shift+P, alone in its read", "\x1bP"],
  ["Alt+], alone in its read", "\x1b]"],
] as const;

describe("a terminal's reply", () => {
  it.each(REPLIES)("%s is a reply, and the keys around it in other reads are typing", (_, reply) => {
    expect(scan(["hel", reply, "lo"])).toEqual({ replies: [false, true, false], typed: "hello", keys: [] });
  });

  it.each(REPLIES)("%s makes its whole read no typing", (_, reply) => {
    expect(scan([`abc${reply}def`, "ghi"])).toEqual({ replies: [true, false], typed: "ghi", keys: [] });
  });

  // cut after its third character and in the middle of the rest (an escape alone, or with a string's introducer
  // alone, is a key: see KEYS); a report without a private marker is known by its final character, and the reads
  // before it bring no keys
  it.each(REPLIES.filter(([, reply]) => reply.length >= 7))("%s cut into three reads is a reply once it can be told", (_, reply) => {
    const middle = 3 + Math.floor((reply.length - 3) / 2);
    const parts = [reply.slice(0, 3), reply.slice(3, middle), reply.slice(middle)];
    const known = !/^(\x1b\[|\u009b)[^?>=]/.test(reply);
    expect(scan(["a", ...parts, "b"])).toEqual({ replies: [false, known, known, true, false], typed: "ab", keys: [] });
  });

  it.each(KEYS)("%s is a key, not a reply", (_, key) => {
    expect(scan(["ab", key, "c"])).toEqual({ replies: [false, false, false], typed: "abc", keys: [key] });
  });
});

describe("reads cut inside a reply", () => {
  it.each([
    ["between ST's escape and its backslash", ["\x1bP>|tmux 3.3a\x1b", "\\", "ok"], [true, true, false]],
    ["right after a C1 introducer", ["\u0090", ">|tmux 3.3a\u009c", "ok"], [true, true, false]],
    ["in a report's parameters", ["\x1b[12;", "5R", "ok"], [false, true, false]],
    ["right after a report's escape and bracket", ["\x1b[", "?64;1c", "ok"], [false, true, false]],
    ["after a report's private marker", ["\x1b[?64;", "1c", "ok"], [true, true, false]],
    ["after keys typed in the same read as the report", ["ab\x1b[12;", "5R", "ok"], [false, true, false]],
  ])("%s leaves none of it typed", (_, reads, replies) => {
    expect(scan(reads)).toEqual({ replies, typed: "ok", keys: [] });
  });

  it("keeps the keys of a read cut inside a key sequence", () => {
    expect(scan(["ab\x1b[1;", "5Cc"])).toEqual({ replies: [false, false], typed: "abc", keys: ["\x1b[1;5C"] });
  });
});

describe("a string that does not end", () => {
  it("gives the keys back once it has run to STRING_LIMIT characters", () => {
    const reads = ["\x1bPunending", "x".repeat(STRING_LIMIT), "hello"];
    expect(scan(reads)).toEqual({ replies: [true, true, false], typed: "hello", keys: [] });
  });

  it("is a reply up to STRING_LIMIT characters across reads", () => {
    const reads = ["\x1b]no end", "y".repeat(STRING_LIMIT / 2), "z".repeat(STRING_LIMIT / 2 - 20), "hello"];
    expect(scan(reads).replies).toEqual([true, true, true, true]);
  });

  it.each([
    ["an escape that begins a key", ["\x1bPno end", "\x1b[A", "hello"], [true, true, false], []],
    ["an escape that begins a key in the same read", ["\x1b]no end\x1b[Ahi", "hello"], [true, false], []],
    ["CAN", ["\x1bPno end", "\x18", "hello"], [true, true, false], []],
    ["SUB", ["\x1bPno end\x1a", "hello"], [true, false], []],
  ])("ends at %s", (_, reads, replies, keys) => {
    expect(scan(reads)).toEqual({ replies, typed: "hello", keys });
  });

  it("is no longer waited for by the idle input line", () => {
    const terminal = new TerminalReads();
    terminal.scan("\x1bPno end");
    expect(terminal.idle).toBe(true);
    terminal.scan("\x1b[1;");
    expect(terminal.idle).toBe(false);
  });
});

describe("a bracketed paste", () => {
  it.each([
    ["whole in one read", ["\x1b[200~line one\rline two\x1b[201~"], "line one\rline two", [false]],
    ["across reads", ["\x1b[200~first\r", "second\x1b[201~"], "first\rsecond", [false, false]],
    ["holding what looks like a string's introducer", ["\x1b[200~a\x1b]b\x1b[201~"], "ab", [false]],
    ["holding what looks like a report", ["\x1b[200~x\x1b[12;5Ry\x1b[201~"], "xy", [false]],
  ])("is typing, %s", (_, reads, typed, replies) => {
    expect(scan(reads)).toMatchObject({ replies, typed });
  });

  it("is marked as pasted, and the text after it is not", () => {
    const scanned = new TerminalReads().scan("\x1b[200~pasted\x1b[201~typed");
    expect(scanned.pieces).toEqual([
      { kind: "text", text: "pasted", pasted: true },
      { kind: "text", text: "typed", pasted: false },
    ]);
  });
});
