import { describe, expect, it } from "vitest";

import { credentialArgs, isSecretValue, Redactor, redactorFor } from "../core/config/redaction.js";

describe("which env values are secrets", () => {
  it.each([
    ["an API key", "sk-proj-xyz123"],
    ["a token of letters and digits", "a1b2c3d4"],
    ["an account folder", "/home/u/.claude-work"],
    ["a password with symbols", "p@ss.w*rd(1)"],
    ["a long value of letters only", "kXqPzLmWvBtRnYhJgFdS"],
    ["a long number", "12345678901234567890"],
  ])("%s is one: %s", (_, value) => {
    expect(isSecretValue(value)).toBe(true);
  });

  it.each([
    ["a switch", "true"],
    ["a switch", "false"],
    ["a mode", "auto"],
    ["a branch", "main"],
    ["a number", "1000"],
    ["a number of 8 digits", "20261203"],
    ["a plain word of 10 letters", "production"],
    ["two words", "Jane Smith"],
    ["a short key-like value", "ab-12"],
  ])("%s is not: %s", (_, value) => {
    expect(isSecretValue(value)).toBe(false);
  });

  it("blanks an entry's key and folder but leaves its switches in the journal's text and in code", () => {
    const config = {
      redact: [],
      entries: [{ env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "true", CLAUDE_CONFIG_DIR: "/home/u/.claude-work", MAX_THINKING_TOKENS: "1000", ANTHROPIC_API_KEY: "sk-ant-api03-7c1d2e3f" } }],
    };
    const code = "const strict = true; // main branch, auto mode, 1000 rows\nexport KEY=sk-ant-api03-7c1d2e3f; ls /home/u/.claude-work";
    expect(redactorFor(config).redact(code)).toBe("const strict = true; // main branch, auto mode, 1000 rows\nexport KEY=[redacted]; ls [redacted]");
  });
});

describe("secrets learnt during a session", () => {
  it("are blanked from then on, and the earlier ones still are", () => {
    const redactor = new Redactor([], ["acct-7c1d2e3f"]);
    expect(redactor.redact("acct-7c1d2e3f and vault-9a8b7c6d")).toBe("[redacted] and vault-9a8b7c6d");
    redactor.add([/ghp_[A-Za-z0-9]{6,}/g], ["vault-9a8b7c6d", "acct-7c1d2e3f"]);
    expect(redactor.redact("acct-7c1d2e3f and vault-9a8b7c6d, ghp_abcdef1")).toBe("[redacted] and [redacted], [redacted]");
  });

  it("come from every entry of the user's own file, also those the project's list left out", () => {
    const config = { redact: [], entries: [{ env: {} }], secrets: ["sk-live-4f9a8b7c6d5e4f3a2b1c"] };
    expect(redactorFor(config).redact("the key sk-live-4f9a8b7c\n  6d5e4f3a2b1c is set")).toBe("the key [redacted] is set");
  });
});

describe("the redactor on hostile text", () => {
  const redactor = new Redactor([/sk-live-[A-Za-z0-9]{8,}/g], ["acct-7c1d2e3f9a8b"]);
  const blanks = " ".repeat(1_000_000);

  it("leaves a line of a million blanks between two line breaks as it is", () => {
    const text = `a\n${blanks}\n`;
    expect(redactor.redact(text)).toBe(text);
  });

  it("finds a secret wrapped across a break with a million blanks on either side", () => {
    expect(redactor.redact(`key acct-7c1d${blanks}\n${blanks}2e3f9a8b done`)).toBe("key [redacted] done");
  });

  it("does not join a secret across a line of a million blanks: a paragraph ends there", () => {
    const text = `acct-7c1d\n${blanks}\n2e3f9a8b`;
    expect(redactor.redact(text)).toBe(text);
  });

  it("blanks a secret on each of 100,000 lines, and a wrapped one at the end", () => {
    const lines = "k acct-7c1d2e3f9a8b\n".repeat(100_000);
    expect(redactor.redact(`${lines}sk-live-4f9a8b7c\n  6d5e4f3a2b1c`)).toBe(`${"k [redacted]\n".repeat(100_000)}[redacted]`);
  });
});

describe("credentials in an entry's args", () => {
  it.each([
    [["--api-key", "openai=sk-abc123def456"], ["openai=sk-abc123def456"]],
    [["--token=ghp_12345678abcd"], ["ghp_12345678abcd"]],
    [["--openai-api-key", "sk-zzz99999999", "--model", "claude-opus-4-1"], ["sk-zzz99999999"]],
    [["--model", "o3", "--no-auto-commits", "--keys-file", "f"], []],
  ])("%j hands on %j", (args, values) => {
    expect(credentialArgs(args)).toEqual(values);
  });

  it("are blanked like env values, so the journal's command line never shows them", () => {
    const config = { redact: [], entries: [{ env: {}, args: ["--api-key", "anthropic=sk-ant-0a1b2c3d4e"] }] };
    expect(redactorFor(config).redact('argv ["/usr/bin/aider","--api-key","anthropic=sk-ant-0a1b2c3d4e"]')).toBe('argv ["/usr/bin/aider","--api-key","[redacted]"]');
  });
});
