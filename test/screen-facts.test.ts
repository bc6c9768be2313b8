import { describe, expect, it } from "vitest";

import { Screen } from "../core/terminal/screen.js";

// What the reader gets from a screen, on random output of the kinds agents write: rows fit the screen and hold no
// escape sequence, the conversation ends with what the screen shows, and none of it depends on how the output
// was cut into chunks or whether a flood was passed over.
const COLS = 30;
const ROWS = 8;

describe("what the reader gets from a screen", () => {
  it.each([
    ["without wide characters", false],
    ["with wide characters", true],
  ])("holds for random streams of text, controls and escape sequences, %s", async (_label, wide) => {
    const random = seeded(20261201);
    const failures: string[] = [];
    for (let n = 0; n < 200; n++) {
      // half of the streams stay on the normal screen, so the conversation can be compared with the screen
      const normalOnly = n % 2 === 0;
      const stream = randomStream(random, 60, normalOnly, wide);
      const whole = new Screen({ cols: COLS, rows: ROWS, scrollback: 50 });
      await whole.write(stream);
      const cut = new Screen({ cols: COLS, rows: ROWS, scrollback: 50 });
      for (const chunk of splitRandomly(random, Buffer.from(stream, "utf8"))) await cut.write(chunk);
      const facts = { visible: whole.visible(), conversation: whole.conversation(), drawn: whole.takeDrawn().lines };
      const problems = [
        facts.visible.length === ROWS ? "" : `${facts.visible.length} rows`,
        facts.visible.some((row) => columns(row) > COLS) ? "a row wider than the screen" : "",
        facts.visible.some((row) => row !== row.trimEnd()) ? "a row with trailing blanks" : "",
        [...facts.visible, facts.conversation, ...facts.drawn].some((text) => /[\x00-\x09\x0b-\x1f\x7f-\x9f]/.test(text)) ? "a control character" : "",
        // (what the alternate screen showed is collected batch by batch, so there only the rows shown must agree)
        JSON.stringify(cut.visible()) === JSON.stringify(facts.visible) ? "" : "other rows when cut into chunks",
        !normalOnly || cut.conversation() === facts.conversation ? "" : "another conversation when cut into chunks",
        !normalOnly || words(facts.conversation).endsWith(words(facts.visible.join(""))) ? "" : "a conversation that does not end with the screen",
      ].filter(Boolean);
      if (problems.length) failures.push(`${problems.join(", ")}: ${JSON.stringify(stream)}`);
    }
    expect(failures.slice(0, 3)).toEqual([]);
  }, 120_000);

  it("is the same for a flood whether its beginning is parsed or passed over", async () => {
    const random = seeded(20261207);
    for (let n = 0; n < 20; n++) {
      const before = randomStream(random, 30, true, n % 2 === 1);
      const flood = Array.from({ length: 50 + ROWS + 1 + Math.floor(random() * 80) }, (_, i) => `flood ${n}.${i} ${"=".repeat(i % 40)}\r\n`).join("");
      const tail = randomStream(random, 5, true, false);
      const parsed = new Screen({ cols: COLS, rows: ROWS, scrollback: 50 });
      await parsed.write(before + flood + tail);
      const queued = new Screen({ cols: COLS, rows: ROWS, scrollback: 50 });
      await queued.write(before);
      queued.queue(Buffer.from(flood + tail, "utf8"));
      const read = await queued.read({ conversation: true });
      expect({ n, visible: read.visible, conversation: read.conversation }).toEqual({ n, visible: parsed.visible(), conversation: parsed.conversation() });
    }
  });

  it.each([
    ["primary device attributes", "\x1b[c", "\x1b[?1;2c"],
    ["secondary device attributes", "\x1b[>c", "\x1b[>0;276;0c"],
    ["device status", "\x1b[5n", "\x1b[0n"],
    ["cursor position", "\x1b[3;7H\x1b[6n", "\x1b[3;7R"],
    ["cursor position, DEC form", "\x1b[3;7H\x1b[?6n", "\x1b[?3;7R"],
    ["a DEC mode that is set", "\x1b[?2004h\x1b[?2004$p", "\x1b[?2004;1$y"],
    ["a DEC mode that is reset", "\x1b[?1049$p", "\x1b[?1049;2$y"],
    ["an ANSI mode", "\x1b[4$p", "\x1b[4;2$y"],
    ["the colours setting", "\x1bP$qm\x1b\\", "\x1bP1$r0m\x1b\\"],
    ["the scroll region setting", "\x1b[2;5r\x1bP$qr\x1b\\", "\x1bP1$r2;5r\x1b\\"],
    ["the kitty keyboard flags, which it does not know", "\x1b[?u", ""],
    ["the window size in pixels, which it does not tell", "\x1b[14t", ""],
  ])("answers %s as a terminal does", async (_what, query, reply) => {
    const screen = new Screen({ cols: COLS, rows: ROWS });
    const replies: string[] = [];
    screen.onReply((data) => replies.push(data));
    await screen.write(query);
    expect(replies.join("")).toBe(reply);
  });
});

// --- helpers ---

function words(text: string): string {
  return text.replace(/\s+/g, "");
}

// the columns a row of these streams takes: the wide words' characters count two
function columns(row: string): number {
  return [...row].reduce((sum, char) => sum + (/[\u3000-\u9fff\uac00-\ud7a3]/.test(char) ? 2 : 1), 0);
}

const WORDS = ["the", "quick", "fox", "ünïcödé", "a", "longer-word-here", "x", "naïve café"];
const WIDE_WORDS = ["日本語", "テスト", "한국어"];

function randomStream(random: () => number, pieces: number, normalOnly: boolean, wide: boolean): string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const words = wide ? [...WORDS, ...WIDE_WORDS] : WORDS;
  const n = (max: number): number => 1 + Math.floor(random() * max);
  const parts: (() => string)[] = [
    () => pick(words),
    () => pick(words) + " " + pick(words),
    () => "\r\n",
    () => "\r\n",
    () => "\r",
    () => "\n",
    () => "\b",
    () => "\t",
    () => `\x1b[${n(ROWS + 2)};${n(COLS + 5)}H`,
    () => `\x1b[${n(4)}${pick(["A", "B", "C", "D", "E", "F"])}`,
    () => `\x1b[${n(COLS)}G`,
    () => `\x1b[${n(ROWS)}d`,
    () => `\x1b[${pick(["", "0", "1", "2"])}J`,
    () => `\x1b[${pick(["", "0", "1", "2"])}K`,
    () => `\x1b[${n(5)}${pick(["X", "@", "P", "L", "M", "S", "T"])}`,
    () => `\x1b[${n(3)};${n(ROWS)}r`,
    () => "\x1b[r",
    () => pick(["\x1bM", "\x1bD", "\x1bE"]),
    () => (normalOnly ? "" : pick(["\x1b[?1049h", "\x1b[?1049l", "\x1b[?1047h", "\x1b[?1047l", "\x1b[?47h", "\x1b[?47l"])),
    () => pick(["\x1b[31m", "\x1b[1;38;5;208m", "\x1b[38:2:10:20:30m", "\x1b[0m", "\x1b[?25l", "\x1b[?25h", "\x1b[?2004h"]),
    () => pick(["\x1b]0;a title\x07", "\x1b]8;;https://example.test\x1b\\link\x1b]8;;\x1b\\", "\x1bP+q544e\x1b\\", "\x1b(B", "\x1b=", "\x1b>"]),
    () => `\x1b[${n(3)}b`,
    () => "x".repeat(n(COLS * 2)),
  ];
  let stream = "";
  for (let i = 0; i < pieces; i++) stream += pick(parts)();
  return stream;
}

function splitRandomly(random: () => number, bytes: Buffer): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; ) {
    const size = 1 + Math.floor(random() * 40);
    chunks.push(bytes.subarray(at, at + size));
    at += size;
  }
  return chunks;
}

function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}
