import { describe, expect, it } from "vitest";

import { buildHandoff } from "../core/handoff.js";

const part = {
  entry: "claude-work",
  name: "Claude Code",
  conversation: [
    "> please rename parse to parseLine",
    "╭──────────────────────────────╮",
    "│ Renamed parse to parseLine.  │",
    "╰──────────────────────────────╯",
    "\x1b[31mtests pass\x1b[0m\x07",
    "⎿  You've hit your weekly limit · resets Dec 3, 9am (Europe/Berlin)",
    "❯ ",
    "  ? for shortcuts · ← for agents",
  ].join("\n"),
  stopText: "You've hit your weekly limit · resets Dec 3, 9am (Europe/Berlin)",
};

describe("the handoff prompt", () => {
  it("carries the conversation without the stop message, chrome, borders or control sequences", () => {
    const handoff = buildHandoff({ parts: [part], maxChars: 100_000, transcriptFile: "/data/sessions/x/transcript-1.txt" });
    expect(handoff.trimmed).toBe(false);
    expect(handoff.transcript).toBe(
      ["--- with Claude Code (claude-work) ---", "> please rename parse to parseLine", "Renamed parse to parseLine.", "tests pass"].join("\n"),
    );
    expect(handoff.prompt.startsWith("You are continuing a conversation that began with Claude Code (claude-work), whose usage allowance ran out.")).toBe(true);
    expect(handoff.prompt).toContain("Hidden reasoning, the previous agent's memory, approvals it had been given and tool calls still running did not carry over");
    expect(handoff.prompt).toContain("Continue with the user's last request.");
    expect(handoff.prompt).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
  });

  it("ends the conversation at the stop message: the limit menu and the keys that left the agent stay behind", () => {
    const menu = {
      ...part,
      conversation: [
        "> what changed?",
        "The parser now reads one line at a time.",
        "  ⎿  You've hit your weekly limit · resets Dec 3, 9am (Europe/Berlin)",
        " What do you want to do?",
        " ❯ 1. Stop and wait for limit to reset",
        "   2. Upgrade your plan",
        "› /exit",
        "Goodbye.",
      ].join("\n"),
    };
    const handoff = buildHandoff({ parts: [menu], maxChars: 100_000, transcriptFile: "t" });
    expect(handoff.transcript).toBe(["--- with Claude Code (claude-work) ---", "> what changed?", "The parser now reads one line at a time."].join("\n"));
  });

  it("leaves out the rest of the limit screen and what the exit keys drew after the stop message", () => {
    const claude = {
      entry: "claude-code",
      name: "Claude Code",
      conversation: [
        "❯ Which colour is the lighthouse?",
        "● The lighthouse is painted saffron yellow.",
        "❯ And how tall is it?",
        "  ⎿  You've hit your 5-hour limit · resets 2:46am (UTC)",
        "     /upgrade to increase your usage limit.",
        "● Usage limit reached · set to continue automatically at 2:46am",
        "  ❯ /exit                       Exit the CLI",
        "Resume this session with:",
        "claude --resume 07c6013a",
      ].join("\n"),
      stopText: "You've hit your 5-hour limit · resets 2:46am (UTC)",
    };
    const handoff = buildHandoff({ parts: [claude], maxChars: 100_000, transcriptFile: "t" });
    expect(handoff.transcript.split("\n").slice(1)).toEqual(["❯ Which colour is the lighthouse?", "● The lighthouse is painted saffron yellow.", "❯ And how tall is it?"]);
  });

  it("leaves out a full-screen agent's logo drawn in braille", () => {
    const codex = { entry: "codex", name: "Codex CLI", conversation: "  ⣀⣤⣤⣤⣀⣀\n ⣠⣶⣿⣿⣿⣿⣿⣿\n› now add tests\n⠋ Working\n• Added three tests." };
    expect(buildHandoff({ parts: [codex], maxChars: 100_000, transcriptFile: "t" }).transcript.split("\n").slice(1)).toEqual(["› now add tests", "⠋ Working", "• Added three tests."]);
  });

  it("carries each run's words once: the next agent's echo of its handoff prompt is left out", () => {
    const first = buildHandoff({ parts: [part], maxChars: 100_000, transcriptFile: "t" });
    // the next agent shows the prompt back as the user's message, wrapped at its own width, then answers
    const echoed = first.prompt.replace(/\s+/g, " ").match(/.{1,70}/g)!.map((line, i) => (i === 0 ? `› ${line}` : `  ${line}`));
    const second = { entry: "codex", name: "Codex CLI", conversation: [...echoed, "• Renamed the tests as well.", "› and the docs?"].join("\n"), stopText: "You've hit your usage limit.", prompt: first.prompt };
    const handoff = buildHandoff({ parts: [part, second], maxChars: 100_000, transcriptFile: "t" });
    expect(handoff.transcript.split("\n")).toEqual([
      "--- with Claude Code (claude-work) ---",
      "> please rename parse to parseLine",
      "Renamed parse to parseLine.",
      "tests pass",
      "",
      "--- with Codex CLI (codex) ---",
      "• Renamed the tests as well.",
      "› and the docs?",
    ]);
  });

  it("keeps every run's part, in order", () => {
    const second = { entry: "codex", name: "Codex CLI", conversation: "> now add tests\nAdded three tests.", stopText: "You've hit your usage limit." };
    const handoff = buildHandoff({ parts: [part, second], maxChars: 100_000, transcriptFile: "t" });
    expect(handoff.transcript.split("\n").filter((line) => line.startsWith("---"))).toEqual(["--- with Claude Code (claude-work) ---", "--- with Codex CLI (codex) ---"]);
    expect(handoff.prompt).toContain("began with Codex CLI (codex)");
  });

  it("carries only the end of a long conversation, and names the file that holds all of it", () => {
    const long = { ...part, conversation: Array.from({ length: 5000 }, (_, i) => `line ${i} of a long session`).join("\n") };
    const handoff = buildHandoff({ parts: [long], maxChars: 4000, transcriptFile: "/data/sessions/x/transcript-1.txt" });
    expect(handoff.trimmed).toBe(true);
    expect(handoff.prompt.length).toBeLessThanOrEqual(4000);
    expect(handoff.prompt).toContain("The whole conversation is in /data/sessions/x/transcript-1.txt; its last part follows.");
    expect(handoff.prompt.trimEnd().endsWith("line 4999 of a long session")).toBe(true);
    expect(handoff.transcript.split("\n")).toHaveLength(5001);
  });
});
