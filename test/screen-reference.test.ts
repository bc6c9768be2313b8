import { createRequire } from "node:module";

import { describe, expect, it } from "vitest";

import { Screen } from "../core/terminal/screen.js";

// uuldana's screen model against a full terminal emulator, on random output of the kinds agents write: the text
// each row shows must be the same.
const require = createRequire(import.meta.url);
const { Terminal } = require("@xterm/headless") as typeof import("@xterm/headless");

const COLS = 30;
const ROWS = 8;

describe("the screen model against a full terminal emulator", () => {
  it.each([
    ["without wide characters", false, 0.99],
    ["with wide characters, which emulators handle differently when one is written over in part", true, 0.98],
  ])("shows the same rows as it on random streams of text, controls and escape sequences, %s", (_label, wide, share) => {
    const random = seeded(20261201);
    const differences: string[] = [];
    let compared = 0;
    for (let n = 0; n < 600; n++) {
      // half of the streams stay on the normal screen, so its history can be compared as well
      const normalOnly = n % 2 === 0;
      const stream = randomStream(random, 60, normalOnly, wide);
      const chunks = splitRandomly(random, Buffer.from(stream, "utf8"));
      const mine = new Screen({ cols: COLS, rows: ROWS, scrollback: 50 });
      for (const chunk of chunks) mine.write(chunk);
      const theirs = reference(chunks);
      // the emulator itself fails on a few streams (an erase at the bottom right corner): nothing to compare
      if (!theirs) continue;
      compared++;
      const ours = { visible: mine.visible(), history: mine.conversation() };
      // the history in order, word for word; which rows join as one wrapped line is checked by the screen tests
      const words = (text: string): string => text.replace(/\s+/g, "");
      if (JSON.stringify(ours.visible) !== JSON.stringify(theirs.visible) || (normalOnly && words(ours.history) !== words(theirs.history))) {
        differences.push(`${JSON.stringify(stream)}\nours:   ${JSON.stringify(ours)}\ntheirs: ${JSON.stringify(theirs)}`);
      }
    }
    expect(compared).toBeGreaterThan(580);
    // the streams on which the two differ, some shown when too many do
    expect({ agreeing: (compared - differences.length) / compared >= share, first: differences.length > compared * (1 - share) ? differences.slice(0, 2) : [] }).toEqual({ agreeing: true, first: [] });
  });

  it("answers the queries agents send the way the emulator does", async () => {
    const queries = ["\x1b[c", "\x1b[>c", "\x1b[5n", "\x1b[3;7H\x1b[6n", "\x1b[?6n", "\x1b[?2004h\x1b[?2004$p", "\x1b[?1049$p", "\x1b[4$p", "\x1bP$qm\x1b\\", "\x1b[2;5r\x1bP$qr\x1b\\", "\x1b[?u", "\x1b[14t"];
    for (const query of queries) {
      const replies: string[] = [];
      const mine = new Screen({ cols: COLS, rows: ROWS });
      mine.onReply((reply) => replies.push(reply));
      mine.write(query);
      expect({ query, reply: replies.join("") }).toEqual({ query, reply: reference([Buffer.from(query)])?.replies });
    }
  });
});

// --- helpers ---

function reference(chunks: Buffer[]): { visible: string[]; history: string; alt: boolean; replies: string } | undefined {
  const term = new Terminal({ cols: COLS, rows: ROWS, scrollback: 50, allowProposedApi: true, logLevel: "off" });
  let replies = "";
  term.onData((data) => (replies += data));
  // parsed at once rather than on the emulator's timer, so that an error of its own is caught here
  const core = (term as unknown as { _core: { writeSync(data: Uint8Array): void } })._core;
  try {
    for (const chunk of chunks) core.writeSync(new Uint8Array(chunk));
  } catch {
    term.dispose();
    return undefined;
  }
  const buffer = term.buffer.active;
  const start = buffer.type === "normal" ? buffer.baseY : 0;
  const visible: string[] = [];
  for (let y = start; y < start + ROWS; y++) visible.push((buffer.getLine(y)?.translateToString(true) ?? "").trimEnd());
  const normal = term.buffer.normal;
  const lines: string[] = [];
  for (let y = 0; y < normal.length; y++) {
    const line = normal.getLine(y)!;
    const text = line.translateToString(!normal.getLine(y + 1)?.isWrapped);
    if (line.isWrapped && lines.length) lines[lines.length - 1] += text;
    else lines.push(text);
  }
  const history = lines.map((line) => line.trimEnd());
  while (history.length && history[history.length - 1] === "") history.pop();
  term.dispose();
  return { visible, history: history.join("\n"), alt: buffer.type === "alternate", replies };
}

const WORDS = ["the", "quick", "fox", "ünïcödé", "a", "longer-word-here", "x", "naïve café"];
// wide characters both count as two columns (emoji are left out: the emulator counts most of them as one, agents'
// layout libraries as two, and uuldana follows the agents)
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
