import { describe, expect, it } from "vitest";

import { Screen } from "../core/terminal/screen.js";

async function feed(screen: Screen, ...chunks: string[]): Promise<void> {
  for (const chunk of chunks) await screen.write(Buffer.from(chunk, "utf8"));
}

describe("the screen model", () => {
  it("joins wrapped rows into one line and keeps blanks at the wrap point", async () => {
    const screen = new Screen({ cols: 20, rows: 5 });
    await feed(screen, `${"A".repeat(19)} ${"B".repeat(25)}\r\nnext\r\n`);
    expect(screen.conversation()).toBe(`${"A".repeat(19)} ${"B".repeat(25)}\nnext`);
    expect(screen.visible()).toEqual(["A".repeat(19), "B".repeat(20), "BBBBB", "next", ""]);
  });

  it("drops colours and other escape sequences from the text", async () => {
    const screen = new Screen({ cols: 40, rows: 5 });
    await feed(screen, "\x1b[31mred\x1b[0m and \x1b[1;32mbold green\x1b[0m\r\n", "\x1b]8;;https://example.test\x07link\x1b]8;;\x07\r\n");
    expect(screen.conversation()).toBe("red and bold green\nlink");
  });

  it("keeps scrollback and screen together, oldest first", async () => {
    const screen = new Screen({ cols: 30, rows: 4, scrollback: 100 });
    await feed(screen, Array.from({ length: 10 }, (_, i) => `line ${i + 1}\r\n`).join(""));
    expect(screen.conversation()).toBe(Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n"));
    expect(screen.visible()).toEqual(["line 8", "line 9", "line 10", ""]);
  });

  it("keeps what a full-screen agent showed on the alternate screen, in order, without its chrome twice", async () => {
    const screen = new Screen({ cols: 40, rows: 10 });
    await feed(screen, "before the agent\r\n", "\x1b[?1049h\x1b[2J\x1b[1;1HHEADER\x1b[10;1HSTATUS BAR\x1b[2;9r\x1b[9;1H");
    for (let i = 1; i <= 20; i++) await feed(screen, `\r\nline ${String(i).padStart(2, "0")}`);
    const story = Array.from({ length: 20 }, (_, i) => `line ${String(i + 1).padStart(2, "0")}`);
    // the first twelve lines scrolled off the screen; the rest, with the header and status bar, are still on it
    const seen = ["before the agent", ...story.slice(0, 12), "HEADER", ...story.slice(12), "STATUS BAR"];
    expect(screen.conversation().split("\n")).toEqual(seen);
    await feed(screen, "\x1b[r\x1b[?1049l", "after the agent\r\n");
    expect(screen.conversation().split("\n")).toEqual([...seen, "after the agent"]);
  });

  it.each([
    ["in the same output", ["\x1b[1;1H\x1b[J\x1b[?1049l"]],
    ["one write after the other", ["\x1b[1;1H\x1b[J", "\x1b[?1049l"]],
  ])("keeps a full-screen agent's last screen when it wipes it before leaving, %s", async (_how, leaving) => {
    const screen = new Screen({ cols: 40, rows: 6 });
    await feed(screen, "\x1b[?1049h\x1b[2J\x1b[1;1H› what is the answer?\x1b[2;1H• forty-two\x1b[6;1H› Ask anything");
    await feed(screen, "\x1b[6;3H\x1b[Kquit");
    for (const chunk of leaving) await feed(screen, chunk);
    await feed(screen, "Token usage: 24\r\n");
    expect(screen.conversation().split("\n")).toEqual(["› what is the answer?", "• forty-two", "› quit", "Token usage: 24"]);
  });

  it("reports the lines that changed since the last read", async () => {
    const screen = new Screen({ cols: 20, rows: 4 });
    await feed(screen, "one\r\ntwo\r\n");
    expect(screen.changedLines()).toEqual(["one", "two"]);
    await feed(screen, "three\r\n");
    expect(screen.changedLines()).toEqual(["three"]);
    expect(screen.changedLines()).toEqual([]);
  });

  it("tells rows that come in at the bottom from rows redrawn where they stand", async () => {
    const screen = new Screen({ cols: 30, rows: 6 });
    await feed(screen, "one\r\ntwo\r\n");
    expect(screen.takeDrawn()).toEqual({ lines: ["one", "two"], grew: 2, redrawn: [] });
    // a clock in the bottom row, drawn with the cursor saved and restored: new content below, then in place
    await feed(screen, "\x1b7\x1b[6;1H12:00:01\x1b8");
    expect(screen.takeDrawn()).toEqual({ lines: ["12:00:01"], grew: 4, redrawn: [] });
    await feed(screen, "\x1b7\x1b[6;1H12:00:02\x1b8");
    expect(screen.takeDrawn()).toEqual({ lines: ["12:00:02"], grew: 0, redrawn: [{ before: "12:00:01", after: "12:00:02", cursor: false }] });
    // the row the cursor is on: redrawn, but not among the lines (it may be typing)
    await feed(screen, "\r⠋ Waiting (1s)");
    await feed(screen, "\r⠙ Waiting (2s)");
    expect(screen.takeDrawn()).toEqual({ lines: [], grew: 0, redrawn: [{ before: "", after: "⠙ Waiting (2s)", cursor: true }] });
    expect(screen.takeDrawn()).toEqual({ lines: [], grew: 0, redrawn: [] });
  });

  it("counts the rows that scroll in: on a full screen, in a scroll region, and in a repaint one row higher", async () => {
    const screen = new Screen({ cols: 30, rows: 4 });
    await feed(screen, "a\r\nb\r\nc\r\n");
    screen.takeDrawn();
    await feed(screen, "step 1\r\nstep 2\r\n");
    expect(screen.takeDrawn()).toEqual({ lines: ["step 1", "step 2"], grew: 2, redrawn: [] });
    await feed(screen, "\x1b[?1049h\x1b[2J\x1b[1;1HHEADER\x1b[4;1HFOOTER\x1b[2;3r\x1b[3;1H");
    screen.takeDrawn();
    await feed(screen, "\r\nstep 3");
    await feed(screen, "\r\nstep 4");
    expect(screen.takeDrawn()).toEqual({ lines: ["step 3"], grew: 2, redrawn: [] });
    await feed(screen, "\x1b[r\x1b[2J\x1b[1;1Hstep 5\x1b[2;1Hstep 6\x1b[3;1Hstep 7\x1b[4;1HFOOTER");
    screen.takeDrawn();
    await feed(screen, "\x1b[1;1H\x1b[2Kstep 6\x1b[2;1H\x1b[2Kstep 7\x1b[3;1H\x1b[2Kstep 8");
    expect(screen.takeDrawn()).toMatchObject({ grew: 1, redrawn: [] });
  });

  it("counts nothing as new after a resize", async () => {
    const screen = new Screen({ cols: 30, rows: 4 });
    await feed(screen, "one\r\ntwo");
    screen.takeDrawn();
    screen.resize(20, 6);
    await feed(screen, "\x1b[3;1Hthree");
    expect(screen.takeDrawn()).toMatchObject({ grew: 0, redrawn: [] });
  });

  it.each([
    ["plain text", ""],
    ["text with escape sequences all through it", "\x1b[1m"],
  ])("keeps exactly the last lines of a flood of %s, however the flood is parsed", async (_kind, style) => {
    const screen = new Screen({ cols: 40, rows: 5, scrollback: 100 });
    await feed(screen, "\x1b[?1049h\x1b[?1049lbefore the flood\r\n", "\x1b[3;1Hhalf-drawn");
    const lines = Array.from({ length: 3000 }, (_, i) => `flood line ${i + 1} ${"=".repeat(i % 20)}`.trimEnd());
    screen.queue(Buffer.from(lines.map((line) => `${style}${line}\r\n`).join("")));
    const { conversation, visible } = await screen.read({ conversation: true });
    // the 100 rows that scrolled off and the 5 on the screen, the last of them the empty row the cursor is on
    expect(conversation.split("\n")).toEqual(lines.slice(-104));
    expect(visible).toEqual([...lines.slice(-4), ""]);
  });

  it("leaves the oldest waiting output out of the model while the emulator is busy, and starts afresh after the gap", async () => {
    const screen = new Screen({ cols: 30, rows: 4, maxBatchBytes: 40 });
    // a title the agent never finished: the emulator would take everything after it for the title
    const busy = screen.write("kept\r\n\x1b]0;an unfinished title");
    screen.queue(Buffer.from("left out: the older part\r\n"));
    screen.queue(Buffer.from("shown: the newer part\r\n"));
    const { conversation } = await screen.read({ conversation: true });
    await busy;
    expect(conversation.split("\n")).toEqual(["kept", "shown: the newer part"]);
  });

  it("places the cursor as terminals do: within the scroll region in origin mode, saved and restored, held at the last column without autowrap", async () => {
    const screen = new Screen({ cols: 10, rows: 6 });
    await feed(screen, "\x1b[3;5r\x1b[?6h\x1b[1;1Horigin\x1b[?6l\x1b[r");
    await feed(screen, "\x1b[6;1Hbottom\x1b7\x1b[1;1Htop\x1b8!");
    await feed(screen, "\x1b[?7l\x1b[2;1Habcdefghijklmnop\x1b[?7h");
    expect(screen.visible()).toEqual(["top", "abcdefghip", "origin", "", "", "bottom!"]);
  });

  it("knows the modes as the output passes, even when a sequence or a character is split between chunks", async () => {
    const screen = new Screen({ cols: 20, rows: 4 });
    await feed(screen, "plain text, no escape\r\n", "\x1b[?104", "9h\x1b[?25l", "\x1b[?2004h\x1b[>1u\x1b=");
    expect(screen.modes).toEqual({ altScreen: true, bracketedPaste: true, mouse: false, focus: false, kittyKeyboard: true, cursorHidden: true, applicationCursor: false, applicationKeypad: true });
    await feed(screen, "\x1b[?1000;1006h\x1b[?1h", "\x1b[<u\x1b>", "\x1b", "[?1049l\x1b[?25h");
    expect(screen.modes).toEqual({ altScreen: false, bracketedPaste: true, mouse: true, focus: false, kittyKeyboard: false, cursorHidden: false, applicationCursor: true, applicationKeypad: false });
    const bytes = Buffer.from("größe 日本\r\n");
    for (const byte of bytes) await screen.write(Buffer.from([byte]));
    expect(screen.visible()[2]).toBe("größe 日本");
  });

  it("tells how each row is drawn, stretch by stretch: colour, bold, dim, inverse", async () => {
    const screen = new Screen({ cols: 50, rows: 4 });
    await feed(screen, "\x1b[1;31mError:\x1b[0m plain \x1b[2mdim\x1b[0m \x1b[7m selected \x1b[0m \x1b[38;2;255;136;0morange\x1b[38;5;208m 日本\x1b[0m\r\n");
    await feed(screen, "  \x1b[7m \x1b[0m\r\nplain only");
    const run = { bold: false, dim: false, inverse: false, fg: null };
    expect(screen.lineStyle(0)).toEqual([
      { ...run, from: 0, to: 6, text: "Error:", fg: 1, bold: true },
      { ...run, from: 6, to: 13, text: " plain " },
      { ...run, from: 13, to: 16, text: "dim", dim: true },
      { ...run, from: 16, to: 17, text: " " },
      { ...run, from: 17, to: 27, text: " selected ", inverse: true },
      { ...run, from: 27, to: 28, text: " " },
      { ...run, from: 28, to: 34, text: "orange", fg: "#ff8800" },
      { ...run, from: 34, to: 39, text: " 日本", fg: 208 },
    ]);
    // an inverse blank is drawn (a cursor or a selection the agent paints); the blanks after the last one are not
    expect(screen.lineStyle(1)).toEqual([
      { ...run, from: 0, to: 2, text: "  " },
      { ...run, from: 2, to: 3, text: " ", inverse: true },
    ]);
    expect(screen.lineStyle(2)).toEqual([{ ...run, from: 0, to: 10, text: "plain only" }]);
    expect([screen.lineStyle(3), screen.lineStyle(4), screen.lineStyle(-1)]).toEqual([[], [], []]);
  });

  it("tracks the modes an agent turns on, so they can be turned off for the user", async () => {
    const screen = new Screen({ cols: 20, rows: 4 });
    await feed(screen, "\x1b[?1049h\x1b[?2004h\x1b[?1000h\x1b[?1004h\x1b[>1u\x1b[?25l");
    expect(screen.modes).toEqual({
      altScreen: true,
      bracketedPaste: true,
      mouse: true,
      focus: true,
      kittyKeyboard: true,
      cursorHidden: true,
      applicationCursor: false,
      applicationKeypad: false,
    });
    await feed(screen, "\x1b[<u\x1b[?25h\x1b[?2004l\x1b[?1049l");
    expect(screen.modes).toMatchObject({ altScreen: false, bracketedPaste: false, kittyKeyboard: false, cursorHidden: false });
  });
});
