import { describe, expect, it } from "vitest";

import { classifyText } from "../core/reader/reader.js";

// The reader keeps no agent's glyphs or model names: it tells bullets by their Unicode category and models by their
// shape, and takes bare model names from the manifests, so it reads an agent nobody described as it reads the rest.
const now = new Date("2026-12-01T12:00:00Z");
const read = (text: string, models?: string[]) => classifyText(text, { now, timeZone: "UTC", models });

describe("the reader's marker glyphs", () => {
  it.each(["✦", "➤", "⚑", "◉", "⠋", "→", "✔"])("takes %s before a message for a bullet, not part of the message", (mark) => {
    const verdict = read(`I renamed the helper.\n${mark} You've hit your usage limit · resets 3pm (UTC)`);
    expect(verdict).toMatchObject({ stop: true, span: { line: 1, text: "You've hit your usage limit · resets 3pm (UTC)" } });
  });

  it("reads a message a panel wraps across lines whole: a border does not begin a message", () => {
    const verdict = read(["│ You've hit your usage limit for │", "│ today; it resets at 3pm (UTC). │"].join("\n"));
    expect(verdict).toMatchObject({ stop: true, reset_at: "2026-12-01T15:01:00.000Z", span: { line: 0, text: "You've hit your usage limit for today; it resets at 3pm (UTC)." } });
  });

  it.each(["working: edited ba.ts and updated its tests", "note: the session was saved"])(
    "ends a message where a line begins with a label in lower case (%s), which is no sentence wrapped from above",
    (line) => {
      const verdict = read(`I renamed the helper.\n⎿  You've hit your weekly limit · resets 3pm (UTC)\n${line}`);
      expect(verdict).toMatchObject({ stop: true, span: { line: 1, text: "You've hit your weekly limit · resets 3pm (UTC)" } });
    },
  );

  it("still reads a sentence wrapped after a parenthesis in lower case as one message", () => {
    const verdict = read("You've hit your usage limit (the weekly one)\nand it resets at 3pm (UTC).");
    expect(verdict).toMatchObject({ stop: true, span: { line: 0, text: "You've hit your usage limit (the weekly one) and it resets at 3pm (UTC)." } });
  });

  it("keeps quotation marks out: a quoted limit message stays a quotation", () => {
    for (const [open, close] of [['"', '"'], ["“", "”"], ["«", "»"]]) {
      expect(read(`The agent printed ${open}You've hit your usage limit${close} when the test ran.`).reasons).toContain("not a stop: a quotation, not a notice");
    }
  });
});

describe("the reader's model names", () => {
  it("reads a limit that names a model by its shape as that model's, without any names given", () => {
    expect(read("Usage limit reached for gpt-7.2-nova. Try again tomorrow.").kind).toBe("per-model");
    expect(read("You've exhausted your quota for qwen4-coder; it resets at 3pm (UTC).").kind).toBe("per-model");
    // an identifier's random letters and digits are not a model
    expect(read("You've exceeded your quota for org-x9Lk2bQ7 · resets 3pm (UTC)").kind).toBe("unknown");
  });

  it("reads a bare name the manifests list as a model's where it names the limit, and nowhere else", () => {
    const text = "You've hit your Quill limit · resets 3pm (UTC)";
    expect(read(text).kind).toBe("unknown");
    expect(read(text, ["quill"]).kind).toBe("per-model");
    // a plan that shares a model's name is not that model
    expect(read("You've hit your usage limit. Upgrade to Pro to keep going.", ["pro"]).kind).toBe("unknown");
    // names that pick no particular model say nothing of one model's limit
    expect(read("You've hit your default limit · resets 3pm (UTC)", ["default", "auto"]).kind).toBe("unknown");
  });

  it("leaves an agent that switched to a model it names by itself alone", () => {
    const text = "Quill limit reached, now using Nib for the rest of the day.";
    expect(read(text).stop).toBe(true);
    expect(read(text, ["quill", "nib"])).toMatchObject({ stop: false, reasons: ['"limit reached" is about an allowance running out', "not a stop: the agent switched model by itself and carries on"] });
  });

  it("counts a link to the usage page as saying what to do about it", () => {
    expect(read("You've hit your monthly spend limit · raise it at https://example.com/settings/usage").reasons).toContain("says what to do about it");
  });
});
