import { describe, expect, it } from "vitest";

import { checkLinePattern, compileLinePatterns, LINE_LIMIT } from "../core/registry/patterns.js";
import { cpuMs } from "./helpers.js";

const NESTED = {
  message: "",
  hint: 'repeat only one of the two: "(?:ab)+" or "a+b+" instead of "(a+b)+", "a+" instead of "(a+)+"',
};
const CUT = {
  message: "",
  hint: 'let each repetition begin in its own way: "(?:a|b)+" instead of "(?:a|b|ab)+", "a+" instead of "(?:a{1,3})+", "[\\w-]+" instead of "(?:\\w|_|-)+"',
};
const SHARE = {
  message: "",
  hint: 'put a character between them that they cannot both match, drop one (a ".*" at either end adds nothing: a pattern matches anywhere in the line), or anchor the pattern with ^',
};
const nested = (part: string) => ({ ...NESTED, message: `repeats a group that itself repeats ("${part}"), which can backtrack without end on a line that almost matches` });
const cut = (part: string) => ({ ...CUT, message: `repeats a group that can cut the same text into repetitions in more than one way ("${part}"), which can backtrack without end on a line that almost matches` });
const share = (parts: string, steps: string) => ({ ...SHARE, message: `has repetitions that can share out the same characters (${parts}), which can take about ${steps} steps on a 500-character line` });

// Each refused pattern with the exact reason and fix the manifest check reports.
const refused: [string, { message: string; hint?: string }][] = [
  ["(a+)+", nested("(a+)+")],
  ["(\\w*)*$", nested("(\\w*)*")],
  ["^(?:\\w+\\s?)+\\(esc to interrupt\\)", nested("(?:\\w+\\s?)+")],
  ["((a+)+)+", nested("(a+)+")],
  ["(?:[a-z]+ ){2,}x", nested("(?:[a-z]+ ){2,}")],
  ["(a|aa)+$", cut("(a|aa)+")],
  ["(?:\\w|_)+", cut("(?:\\w|_)+")],
  ["(?:a|b|ab)+", cut("(?:a|b|ab)+")],
  ["(?:a?a)+", cut("(?:a?a)+")],
  ["(?:a{1,3})+x", cut("(?:a{1,3})+")],
  [
    "(?:a{0,300})+",
    { message: 'repeats a group that can be spelt in more than 256 ways ("(?:a{0,300})+"), too many to tell whether it can backtrack without end', hint: "repeat a simpler group, or a character class" },
  ],
  ["^(─+)\\1$", { message: 'refers back to what a group matched ("\\1"), which has no bound on how long it takes', hint: "write the text out again instead of referring back to it" }],
  ["(?<word>\\w)\\k<word>", { message: 'refers back to what a group matched ("\\k<word>"), which has no bound on how long it takes', hint: "write the text out again instead of referring back to it" }],
  [
    "(?<=^\\s*)> ",
    {
      message: 'looks behind for text of unbounded length ("(?<=^\\s*)"), which is read again at every position of the line',
      hint: 'bound the repetition inside the lookbehind ("{0,20}" instead of "*" or "+"), or match that text itself',
    },
  ],
  [
    "(?<!x.+)y",
    {
      message: 'looks behind for text of unbounded length ("(?<!x.+)"), which is read again at every position of the line',
      hint: 'bound the repetition inside the lookbehind ("{0,20}" instead of "*" or "+"), or match that text itself',
    },
  ],
  [".*·.*esc to interrupt", share('".*", ".*"', "126 million")],
  ["\\s*\\s*x", share('"\\s*", "\\s*"', "126 million")],
  ["\\s+\\S*\\s+x", share('"\\s+", "\\s+"', "125 million")],
  ["^.*.*.*x", share('".*", ".*", ".*"', "126 million")],
  ["a{0,40}a{0,40}x", share('"a{0,40}", "a{0,40}"', "841 thousand")],
  [".*(?=.*x)", share('".*", ".*"', "126 million")],
  ["(x", { message: "is not a valid regular expression (/(x/u: Unterminated group)" }],
  ["a\\-b", { message: "is not a valid regular expression (/a\\-b/u: Invalid escape)" }],
];

// Patterns of the kind agents' screens need.
const screen = [
  "esc to interrupt",
  "\\? for shortcuts",
  "^\\s*[╭╰│─━]",
  "^[─━]{3,}$",
  "^\\s*[─━]+\\s*$",
  "\\(\\d+s · esc to interrupt\\)",
  "^[✻✽✶✳✢·*●⏺] \\w+…",
  "Thinking.*\\(\\d+s",
  "\\d+m \\d+s",
  "(?:\\s?-)+",
  "(?:\\d{1,3},)+\\d{3}",
];
// Patterns near the edge of what is allowed.
const edge = [
  "(?:ab{0,3})+",
  "(ab|ac)+",
  "(a|ab)+",
  "^.*.*x",
  "^.*\\d+%.*$",
  "foo.*bar.*",
  "a*x",
  "(?<=^> {0,4})\\w",
  "(?=.*x)",
  "(?<name>x)y",
];

describe("line patterns", () => {
  it.each(refused)("refuses %s, saying why and how to fix it", (pattern, problem) => {
    expect(checkLinePattern(pattern)).toEqual(problem);
  });

  it.each([...screen, ...edge])("accepts %s", (pattern) => {
    expect(checkLinePattern(pattern)).toBeUndefined();
  });

  it("test a line against every pattern at once, however the patterns name their groups", () => {
    const matches = compileLinePatterns(["(?<n>ab)c", "(?<n>x)y", "^(\\d+)%$", "a|b"]);
    expect(["abc", "--xy--", "42%", "b", "c", "4%2", ""].map(matches)).toEqual([true, true, true, true, false, false, false]);
  });

  it("match only the first 500 characters of a line", () => {
    const matches = compileLinePatterns(["x"]);
    expect(matches(`${"-".repeat(LINE_LIMIT - 1)}x`)).toBe(true);
    expect(matches(`${"-".repeat(LINE_LIMIT)}x`)).toBe(false);
    expect(compileLinePatterns(["^-+$"])(`${"-".repeat(LINE_LIMIT)}x`)).toBe(true);
  });

  it("match nothing when a manifest has none", () => {
    expect(compileLinePatterns([])("anything")).toBe(false);
  });

  it("are refused when compiled unchecked", () => {
    expect(() => compileLinePatterns(["ok", "(a+)+"])).toThrow(
      'the line pattern "(a+)+" repeats a group that itself repeats ("(a+)+"), which can backtrack without end on a line that almost matches',
    );
  });

  it("stay quick on hostile lines: a screen's patterns together test 10,000 lines in well under a second", () => {
    const matches = compileLinePatterns(screen);
    const lines = Array.from({ length: 10_000 }, (_, i) =>
      [" ".repeat(500), "a".repeat(800), "·1s".repeat(200), "-".repeat(499) + "!", `✶ Crunching… (${i}s · esc to interrupt)`][i % 5]!,
    );
    let hits = 0;
    const took = cpuMs(() => void (hits = lines.filter(matches).length));
    expect(hits).toBe(4000);
    expect(took).toBeLessThan(1000);
  });

  it("stay within their bound at the edge: a repetition that can start anywhere, on a line it fills", () => {
    const matches = compileLinePatterns(["a*x", "\\d+s"]);
    const results: boolean[] = [];
    expect(cpuMs(() => void results.push(...Array.from({ length: 100 }, () => matches("a".repeat(250) + "1".repeat(250)))))).toBeLessThan(1000);
    expect(results.every((matched) => !matched)).toBe(true);
  });
});
