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

  it("does not count a spinner or a clock redrawn as work", () => {
    const detector = make();
    detector.observe([LIMIT], 0);
    detector.observe(["⠋ Waiting (1s)"], 100);
    expect(detector.observe(["⠙ Waiting (2s)"], 1200)).toEqual([]);
    expect(detector.observe(["⠹ Waiting (3s)"], 1400)).toEqual([]);
    expect(types(detector.tick(1600))).toEqual(["stop"]);
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
