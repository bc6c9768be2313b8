import { describe, expect, it } from "vitest";

import { UuldanaError, errorJson, exitCodeOf, formatError, formatInternalError } from "../core/base/errors.js";

describe("the error printer", () => {
  it("shows the message with its code, the details, the hint, then each cause outermost first, one line each", () => {
    const system = Object.assign(new Error("EIO: i/o error, read"), { code: "EIO" });
    const inner = new UuldanaError("E_JSON_SYNTAX", "/x/pack/package.json:1:2: invalid JSON", { cause: system });
    const error = new UuldanaError("E_PACK_UNREADABLE", 'provider pack "p" cannot be read', {
      details: ["  at /uuldana (uuldana): line\nbreak"],
      hint: "fix the pack",
      cause: inner,
    });
    expect(formatError(error)).toBe(
      [
        'uuldana: provider pack "p" cannot be read [E_PACK_UNREADABLE]',
        "  at /uuldana (uuldana): line\\nbreak",
        "hint: fix the pack",
        "cause: /x/pack/package.json:1:2: invalid JSON [E_JSON_SYNTAX]",
        "cause: EIO: i/o error, read",
        "",
      ].join("\n"),
    );
  });

  it("escapes control characters in a cause, and shows a cause that is not an Error as text", () => {
    const error = new UuldanaError("E_ADAPTER_LOAD", "the adapter of provider \"x\" could not be loaded", {
      cause: new Error("bad\x1b]0;title\x07 token\nat line 2", { cause: { errno: -5 } }),
    });
    expect(formatError(error)).toBe(
      [
        'uuldana: the adapter of provider "x" could not be loaded [E_ADAPTER_LOAD]',
        "cause: bad\\u001b]0;title\\u0007 token\\nat line 2",
        'cause: {"errno":-5}',
        "",
      ].join("\n"),
    );
  });

  it("stops at a cause that loops back", () => {
    const first = new Error("first");
    const second = new Error("second", { cause: first });
    (first as { cause?: unknown }).cause = second;
    const error = new UuldanaError("E_INTERNAL", "internal error: loop", { cause: first });
    expect(formatError(error)).toBe("uuldana: internal error: loop [E_INTERNAL]\ncause: first\ncause: second\n");
  });

  it("shows anything else thrown as an internal error, with its causes, exit 70", () => {
    const thrown = new TypeError("x is not a function", { cause: "a string cause" });
    const text = "uuldana: internal error: x is not a function [E_INTERNAL]\nhint: this is a bug in uuldana; please report it with the command you ran\ncause: a string cause\n";
    expect(formatError(thrown)).toBe(text);
    expect(formatInternalError(thrown)).toBe(text);
    expect(formatError("just a string")).toBe("uuldana: internal error: just a string [E_INTERNAL]\nhint: this is a bug in uuldana; please report it with the command you ran\n");
    expect(exitCodeOf(thrown)).toBe(70);
    expect(exitCodeOf(new UuldanaError("E_COOLDOWNS_LOCKED", "nothing was cleared", { exitCode: 1 }))).toBe(1);
  });
});

describe("the --json error object", () => {
  it("carries the same facts: code, message, details, hint (null when none) and the cause chain", () => {
    const error = new UuldanaError("E_CONFIG_UNREADABLE", "cannot read config /c/config.json: it cannot be read (EIO)", {
      hint: "check the file and the folder that holds it",
      cause: new UuldanaError("E_JSON_SYNTAX", "inner", { cause: new Error("EIO: i/o error, read") }),
    });
    expect(errorJson(error)).toEqual({
      error: {
        code: "E_CONFIG_UNREADABLE",
        message: "cannot read config /c/config.json: it cannot be read (EIO)",
        details: [],
        hint: "check the file and the folder that holds it",
        cause: [
          { code: "E_JSON_SYNTAX", message: "inner" },
          { code: null, message: "EIO: i/o error, read" },
        ],
      },
    });
    expect(errorJson(new RangeError("boom"))).toEqual({
      error: { code: "E_INTERNAL", message: "internal error: boom", details: [], hint: "this is a bug in uuldana; please report it with the command you ran", cause: [] },
    });
  });
});
