import { describe, expect, it } from "vitest";

import { Detector, type DetectorEvent } from "../core/reader/detector.js";
import { classifyText } from "../core/reader/reader.js";

const now = new Date("2026-11-30T12:00:00Z");
const make = (): Detector =>
  new Detector({ quietMs: 1500, dismissMs: 20_000, classify: (text) => classifyText(text, { now, timeZone: "UTC" }) });
const LIMIT = "⎿  You've hit your weekly limit · resets Dec 3, 9am (UTC)";
const types = (events: DetectorEvent[]): string[] => events.map((event) => event.type);

describe("the streaming detector", () => {
  it("stops once the agent has been quiet after a limit message", () => {
    const detector = make();
    expect(detector.nextDeadline()).toBeUndefined();
    expect(types(detector.observe(["I refactored the parser.", LIMIT], 1000))).toEqual(["candidate"]);
    expect(detector.nextDeadline()).toBe(2500);
    expect(detector.tick(2499)).toEqual([]);
    const [stop] = detector.tick(2500);
    expect(stop).toMatchObject({ type: "stop", after: "quiet", at: 2500, text: "You've hit your weekly limit · resets Dec 3, 9am (UTC)" });
    expect(detector.nextDeadline()).toBeUndefined();
  });

  it("reads a message drawn in pieces whole before it stops: the reset on the line drawn after it", () => {
    const detector = make();
    expect(types(detector.observe(["You've hit your usage limit."], 0))).toEqual(["candidate"]);
    detector.observe(["Your limit resets at 5pm (UTC)."], 100);
    const [stop] = detector.tick(1600);
    expect(stop).toMatchObject({ type: "stop", text: "You've hit your usage limit." });
    expect(stop!.verdict.reset_at).toBe("2026-11-30T17:01:00.000Z");
  });

  it("dismisses a message whose details, drawn after it, make it a throttle", () => {
    const detector = make();
    expect(types(detector.observe(["✕ [API Error: You exceeded your current quota, please check your plan and billing details."], 0))).toEqual(["candidate"]);
    detector.observe(["Please retry in 56.47s."], 100);
    expect(detector.tick(1600)).toMatchObject([{ type: "dismissed", whole: { stop: false } }]);
  });

  it("dismisses the text when the agent keeps working, and says so once", () => {
    const detector = make();
    detector.observe([LIMIT], 0);
    const words = ["parser", "lexer", "tokens", "syntax", "grammar", "errors", "printer", "visitor", "scopes", "types"];
    for (let t = 1000; t < 20_000; t += 1000) expect(detector.observe([`edited the ${words[(t / 1000) % 10]} module, step ${words[(t / 2000) % 10 | 0]}`], t)).toEqual([]);
    const events = detector.observe(["all modules edited"], 20_000);
    expect(types(events)).toEqual(["dismissed"]);
    expect(detector.nextDeadline()).toBeUndefined();
    // the same text drawn again (a redraw, scrollback) does not start over
    expect(detector.observe([LIMIT], 21_000)).toEqual([]);
  });

  // A row redrawn where it stands, as the screen model reports it.
  const redraw = (before: string, after: string, cursor = false) => ({ lines: cursor ? [] : [after], grew: 0, redrawn: [{ before, after, cursor }] });

  it.each([
    ["a braille spinner with a running timer on the cursor's row", ["⠋ Waiting (1s)", "⠙ Waiting (2s)", "⠹ Waiting (3s)"], true],
    ["a dingbat spinner, a gerund and a timer", ["✶ Crunching… (12s · esc to interrupt)", "✻ Crunching… (13s · esc to interrupt)", "✽ Crunching… (14s · esc to interrupt)"], false],
    ["a spinner glyph alone turning", ["⠋ Thinking", "⠙ Thinking", "⠹ Thinking"], false],
    ["a progress bar filling", ["[==>       ]", "[===>      ]", "[====>     ]"], false],
    ["a fixed bullet, a gerund and a timer", ["• Compiling… (8s)", "• Compiling… (9s)", "• Compiling… (10s)"], true],
    ["dots after a gerund and a clock", ["Indexing... 0:08", "Indexing... 0:09", "Indexing... 0:10"], false],
  ])("counts %s redrawn in place as work", (_what, frames, cursor) => {
    const detector = make();
    detector.observe([LIMIT], 0);
    let at = 0;
    for (let t = 1000; t <= 20_000; t += 1000) {
      at = t;
      const before = frames[(t / 1000 - 1) % 3]!;
      const after = frames[(t / 1000) % 3]!;
      if (t < 20_000) expect(detector.observe(redraw(before, after, cursor), t)).toEqual([]);
    }
    expect(types(detector.tick(at))).toEqual(["dismissed"]);
  });

  it.each([
    ["a clock", ["12:00:01", "12:00:02", "12:00:03"], false],
    ["a counter beside words", ["context left: 41%", "context left: 40%", "context left: 39%"], false],
    ["a timer without a gerund", ["⠿ Waiting (1s)", "⠿ Waiting (2s)", "⠿ Waiting (3s)"], true],
    ["the same row drawn again", ["I refactored the parser.", "I refactored the parser.", "I refactored the parser."], false],
  ])("does not count %s redrawn in place with other digits as work", (_what, frames, cursor) => {
    const detector = make();
    detector.observe([LIMIT, frames[0]!], 0);
    expect(detector.observe(redraw(frames[0]!, frames[1]!, cursor), 600)).toEqual([]);
    expect(detector.observe(redraw(frames[1]!, frames[2]!, cursor), 1200)).toEqual([]);
    expect(detector.nextDeadline()).toBe(1500);
    expect(detector.tick(1500)).toMatchObject([{ type: "stop", after: "quiet", at: 1500 }]);
  });

  it("counts progress lines that come in at the bottom as work, though they differ only in a number", () => {
    const detector = make();
    detector.observe([LIMIT], 0);
    for (let t = 1000; t < 20_000; t += 1000) {
      expect(detector.observe({ lines: [`Working on step ${t / 1000}…`], grew: 1, redrawn: [] }, t)).toEqual([]);
    }
    expect(types(detector.tick(20_000))).toEqual(["dismissed"]);
  });

  it("counts a row rewritten in place with new words as work, and the same words again not", () => {
    const detector = make();
    detector.observe([LIMIT, "reading the lexer"], 0);
    expect(detector.observe(redraw("reading the lexer", "reading the parser"), 1000)).toEqual([]);
    expect(detector.nextDeadline()).toBe(2500);
    expect(detector.observe(redraw("reading the parser", "reading the lexer"), 2000)).toEqual([]);
    expect(types(detector.tick(2500))).toEqual(["stop"]);
  });

  it("does not count the line being typed, rows of the user's own, or the limit text coming in again as work", () => {
    const detector = make();
    detector.observe([LIMIT], 0);
    expect(detector.observe(redraw("> wha", "> what now", true), 500)).toEqual([]);
    detector.noteInput("what now\r");
    expect(detector.observe({ lines: ["> what now"], grew: 1, redrawn: [] }, 1000)).toEqual([]);
    expect(detector.observe({ lines: [LIMIT], grew: 2, redrawn: [] }, 1200)).toEqual([]);
    expect(types(detector.tick(1500))).toEqual(["stop"]);
  });

  describe("with the provider's busy test", () => {
    const screens: (readonly string[])[] = [];
    const withBusy = (busy: (screen: readonly string[]) => boolean): Detector =>
      new Detector({ quietMs: 1500, dismissMs: 20_000, classify: (text) => classifyText(text, { now, timeZone: "UTC" }), busy });
    const working = ["⎿  You've hit your weekly limit", "◆ running the tests · esc to cancel"];

    it("asks it with the visible rows at the quiet deadline, and keeps a quiet agent it says is busy", () => {
      screens.length = 0;
      const detector = withBusy((screen) => {
        screens.push(screen);
        return screen.some((line) => line.includes("esc to cancel"));
      });
      detector.observe([LIMIT], 0);
      expect(detector.needsScreen(1499)).toBe(false);
      expect(detector.needsScreen(1500)).toBe(true);
      expect(detector.tick(1500, working)).toEqual([]);
      expect(screens).toEqual([working]);
      expect(detector.nextDeadline()).toBe(3000);
      for (let t = 3000; t < 19_500; t += 1500) expect(detector.tick(t, working)).toEqual([]);
      expect(types(detector.tick(20_000, working))).toEqual(["dismissed"]);
    });

    it("does not stop for quiet on a batch of idle redraws while the busy test is still to see the screen", () => {
      const detector = withBusy(() => true);
      detector.observe([LIMIT], 0);
      // the same row redrawn, only its count changing: no work, and past the quiet deadline
      expect(detector.observe({ lines: ["pondering 2"], grew: 0, redrawn: [{ before: "pondering 1", after: "pondering 2", cursor: true }] }, 1600)).toEqual([]);
      expect(detector.needsScreen(1600)).toBe(true);
      expect(detector.tick(1600, working)).toEqual([]);
    });

    it("stops when it says the agent is not busy, and when it throws", () => {
      const idle = withBusy(() => false);
      idle.observe([LIMIT], 0);
      expect(idle.tick(1500, ["⎿  You've hit your weekly limit"])).toMatchObject([{ type: "stop", after: "quiet" }]);
      const broken = withBusy(() => {
        throw new Error("bad pattern");
      });
      broken.observe([LIMIT], 0);
      expect(broken.tick(1500, working)).toMatchObject([{ type: "stop", after: "quiet" }]);
    });

    it("is asked at most five times a second, whatever the quiet period", () => {
      let asked = 0;
      const detector = new Detector({ quietMs: 0, dismissMs: 20_000, classify: (text) => classifyText(text, { now, timeZone: "UTC" }), busy: () => ++asked > 0 });
      detector.observe([LIMIT], 0);
      expect(detector.tick(0, working)).toEqual([]);
      expect(detector.nextDeadline()).toBe(200);
      expect(detector.needsScreen(199)).toBe(false);
      expect(asked).toBe(1);
    });

    it("never stops for quiet without the screen the busy test is to see, whatever the clock says by then", () => {
      const detector = new Detector({ quietMs: 1500, dismissMs: 20_000, classify: (text) => classifyText(text, { now, timeZone: "UTC" }), busy: () => true });
      detector.observe([LIMIT], 0);
      // a caller that asked needsScreen a moment before the deadline, then ticked a moment after it
      expect(detector.needsScreen(1499)).toBe(false);
      expect(detector.tick(1500)).toEqual([]);
      expect(detector.needsScreen(1500)).toBe(true);
      expect(detector.tick(1500, ["◆ running the test suite"])).toEqual([]);
    });

    it("is not needed without a limit message, or without a hook", () => {
      expect(withBusy(() => true).needsScreen(60_000)).toBe(false);
      const plain = make();
      plain.observe([LIMIT], 0);
      expect(plain.needsScreen(60_000)).toBe(false);
    });
  });

  it("after a limit message, takes a failing exit for a stop and exit 0 for the user leaving", () => {
    const failing = make();
    failing.observe([LIMIT], 0);
    expect(failing.exit(1, 300)).toMatchObject([{ type: "stop", after: "failing exit" }]);
    const leaving = make();
    leaving.observe([LIMIT], 0);
    expect(types(leaving.exit(0, 300))).toEqual(["left"]);
    expect(make().exit(1, 0)).toEqual([]);
  });

  it("ignores what the user typed, even when it reads like a limit message", () => {
    const detector = make();
    detector.noteInput("You've hit your weekly limit, what now");
    expect(detector.observe(["> You've hit your weekly limit, what now"], 0)).toEqual([]);
    expect(detector.nextDeadline()).toBeUndefined();
  });

  it("ignores the first prompt shown back as the user's message, the previous agent's limit screen quoted in it", () => {
    const detector = make();
    detector.notePrompt(`You are continuing a conversation.\n\n--- with Claude Code ---\n● Usage limit reached · set to continue automatically at 2:46am\n● The lighthouse is yellow.`);
    // the agent wraps and re-spaces the prompt's lines inside its own frame
    expect(detector.observe(["› ● Usage limit reached · set to", "  continue   automatically at 2:46am"], 0)).toEqual([]);
    expect(detector.nextDeadline()).toBeUndefined();
    // its own limit message still counts
    expect(types(detector.observe([LIMIT], 100))).toEqual(["candidate"]);
  });

  it("never stops on a warning", () => {
    const detector = make();
    expect(detector.observe(["You've used 85% of your weekly limit · resets Mon 9am"], 0)).toEqual([]);
    expect(detector.tick(60_000)).toEqual([]);
  });
});
