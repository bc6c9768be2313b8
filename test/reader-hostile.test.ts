import { describe, expect, it } from "vitest";

import { classifyText } from "../core/reader/reader.js";
import { cpuMs } from "./helpers.js";

// The reader runs on every line an agent draws, on uuldana's own thread: text an agent prints (a file it shows, a
// log it tails) must never make it throw, and never make it take time out of proportion to the text.
const now = new Date("2026-12-01T12:00:00Z");
const read = (text: string) => classifyText(text, { now, timeZone: "UTC" });

describe("the reader on hostile text", () => {
  it.each([
    ["a word in parentheses after a weekday", "You have hit your usage limit. It resets Monday 9am (Monday Morning).", "2026-12-07T09:01:00.000Z"],
    ["a zone that does not exist", "Limit reached · resets Fri 3pm (Europe/Nowhere)", "2026-12-04T15:01:00.000Z"],
    ["a word after a time", "You've reached your usage limit; try again at 5pm (approx).", "2026-12-01T17:01:00.000Z"],
  ])("reads %s in the local zone instead of throwing", (_what, text, reset) => {
    const verdict = read(text);
    expect(verdict.stop).toBe(true);
    expect(verdict.reset_at).toBe(reset);
  });

  it.each([
    ["a wait no clock can hold", "You've hit your usage limit. Try again in 99999999999999 days."],
    ["a wait of many years", "Usage limit reached. Resets in 9999999 hours"],
    ["a date that does not exist", "Your quota is exhausted until 2026-13-45T99:00:00Z"],
  ])("reads %s as no reset time: the entry rests for cooldown_minutes", (_what, text) => {
    const verdict = read(text);
    expect(verdict).toMatchObject({ stop: true, reset_at: null });
  });

  it("judges a 100 KB line that repeats the words as one long text, not a message", () => {
    const verdict = read("usage limit reached ".repeat(5000));
    expect(verdict.stop).toBe(false);
    expect(verdict.reasons).toEqual(['"limit reached" is about an allowance running out', "not a stop: too little around it (score 3, a stop needs 4)"]);
  });

  it.each([
    ["100,000 border characters before a message", `${"│".repeat(100_000)} You've hit your usage limit · resets 3pm (UTC)`, true],
    ["a bar of 100,000 blocks before a message", `${"█".repeat(100_000)} You've hit your usage limit · resets 3pm (UTC)`, false],
    ["100,000 bullets before a message", `${"● ".repeat(50_000)}You've hit your usage limit · resets 3pm (UTC)`, true],
    ["a 100 KB token of hyphenated words", `You've hit your usage limit · resets 3pm (UTC) ${"model-x".repeat(15_000)}-`, true],
  ])("reads %s in time proportional to its length", (_what, text, stop) => {
    let verdict: ReturnType<typeof classifyText> | undefined;
    expect(cpuMs(() => (verdict = classifyText(text, { now, timeZone: "UTC", models: ["opus", "pro"] })))).toBeLessThan(1000);
    expect(verdict!.stop).toBe(stop);
  });
});
