import { describe, expect, it } from "vitest";

import { TerminalReads } from "../core/host/terminal-replies.js";
import { TypedTurns } from "../core/host/typed-turns.js";

// The reads of the user's terminal as a run takes them: each scanned, the keys of those that are no reply typed.
function type(reads: readonly string[], turns = new TypedTurns()): TypedTurns {
  const terminal = new TerminalReads();
  for (const read of reads) {
    const scanned = terminal.scan(read);
    if (!scanned.reply) turns.add(scanned.pieces);
  }
  return turns;
}

describe("the lines the user submits", () => {
  it.each([
    ["a line typed key by key", ["h", "i", "\r"], ["hi"]],
    ["two lines in one read", ["first\rsecond\r"], ["first", "second"]],
    ["Enter as a line feed", ["hi\n"], ["hi"]],
    ["backspace and DEL", ["helo\x7f\x7flo\bo\r"], ["helo"]],
    ["Ctrl+U and Ctrl+C emptying the line", ["gone\x15kept\r", "gone too\x03\r"], ["kept"]],
    ["arrows and function keys left out", ["a\x1b[Db\x1bOP\x1b[15~c\r"], ["abc"]],
    ["C0 and C1 controls left out", ["a\x01b\u0085c\r"], ["abc"]],
    ["blank lines not a turn", ["  \r", "\r"], []],
    ["a paste kept whole, its line breaks included", ["\x1b[200~line one\rline two\x1b[201~", "\r"], ["line one\nline two"]],
    ["a paste across reads", ["\x1b[200~first\r", "second\x1b[201~ and more\r"], ["first\nsecond and more"]],
    ["the terminal's replies between the keys", ["hel", "\x1bP>|tmux 3.3a\x1b\\", "lo", "\x1b]11;rgb:0000/0000/0000\x07", "\x1b[12;5R", "\r"], ["hello"]],
    ["a read with a reply and keys: none of it typed", ["a", "b\x1b[?64;1cc\r", "d\r"], ["ad"]],
    ["the XTVERSION reply of a real journal", ["\x1bP>|tmux 3.3a\x1b\\", "3\r"], ["3"]],
  ])("%s", (_, reads, turns) => {
    expect(type(reads).turns).toEqual(turns);
  });

  it("tells each line as it is submitted", () => {
    const told: string[] = [];
    type(["one\rtwo\r"], new TypedTurns((text) => told.push(text)));
    expect(told).toEqual(["one", "two"]);
  });

  it("knows the line half typed", () => {
    const turns = type(["done\r", " half typed \x1b[A"]);
    expect([turns.partial, turns.empty]).toEqual(["half typed", false]);
    expect(type(["done\r"]).empty).toBe(true);
  });
});

describe("lines typed while keys are held", () => {
  it("are kept apart and not told, the line half typed before the hold going on", () => {
    const told: string[] = [];
    const turns = type(["before\r", "the start "], new TypedTurns((text) => told.push(text)));
    turns.hold();
    type(["of a line\r", "\x1b[200~a\rpaste\x1b[201~\r", "half"], turns);
    expect({ turns: turns.turns, told, held: turns.held, partial: turns.partial }).toEqual({
      turns: ["before"],
      told: ["before"],
      held: ["the start of a line", "a\npaste"],
      partial: "half",
    });
  });
});
