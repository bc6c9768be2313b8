import { spawnSync } from "node:child_process";

import { describe, expect, it } from "vitest";

import { Detector } from "../core/reader/detector.js";
import { buildHandoff, MAX_PROMPT_SIZE, promptSize, type RunPart } from "../core/session/handoff.js";
import type { Turn } from "../core/registry/adapter.js";
import { classifyText } from "../core/reader/reader.js";
import { Redactor } from "../core/config/redaction.js";
import { compileLinePatterns } from "../core/registry/patterns.js";
import { loadBuiltInManifests } from "../core/registry/registry.js";

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
    const handoff = buildHandoff({ parts: [part], canReadFile: true, maxSize: 100_000, transcriptFile: "/data/sessions/x/transcript-1.txt" });
    expect(handoff.trimmed).toBe(false);
    expect(handoff.transcript).toBe(
      ["--- Claude Code (claude-work), as its screen showed it ---", "> please rename parse to parseLine", "Renamed parse to parseLine.", "tests pass"].join("\n"),
    );
    expect(handoff.prompt.startsWith("You are continuing a conversation from Claude Code (claude-work), whose usage allowance ran out.")).toBe(true);
    expect(handoff.prompt).toContain("Hidden reasoning, the earlier agents' memory, approvals they had been given and tool calls still running did not carry over");
    expect(handoff.prompt).toContain("Continue where the conversation leaves off.");
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
    const handoff = buildHandoff({ parts: [menu], canReadFile: true, maxSize: 100_000, transcriptFile: "t" });
    expect(handoff.transcript).toBe(["--- Claude Code (claude-work), as its screen showed it ---", "> what changed?", "The parser now reads one line at a time."].join("\n"));
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
    const handoff = buildHandoff({ parts: [claude], canReadFile: true, maxSize: 100_000, transcriptFile: "t" });
    expect(handoff.transcript.split("\n").slice(1)).toEqual(["❯ Which colour is the lighthouse?", "● The lighthouse is painted saffron yellow.", "❯ And how tall is it?"]);
  });

  it("leaves out a full-screen agent's logo drawn in braille", () => {
    const codex = { entry: "codex", name: "Codex CLI", conversation: "  ⣀⣤⣤⣤⣀⣀\n ⣠⣶⣿⣿⣿⣿⣿⣿\n› now add tests\n⠋ Working\n• Added three tests." };
    expect(buildHandoff({ parts: [codex], canReadFile: true, maxSize: 100_000, transcriptFile: "t" }).transcript.split("\n").slice(1)).toEqual(["› now add tests", "⠋ Working", "• Added three tests."]);
  });

  it("carries each run's words once: the next agent's echo of its handoff prompt is left out", () => {
    const first = buildHandoff({ parts: [part], canReadFile: true, maxSize: 100_000, transcriptFile: "t" });
    // the next agent shows the prompt back as the user's message, wrapped at its own width, then answers
    const echoed = first.prompt.replace(/\s+/g, " ").match(/.{1,70}/g)!.map((line, i) => (i === 0 ? `› ${line}` : `  ${line}`));
    const second = { entry: "codex", name: "Codex CLI", conversation: [...echoed, "• Renamed the tests as well.", "› and the docs?"].join("\n"), stopText: "You've hit your usage limit.", prompt: first.prompt };
    const handoff = buildHandoff({ parts: [part, second], canReadFile: true, maxSize: 100_000, transcriptFile: "t" });
    expect(handoff.transcript.split("\n")).toEqual([
      "--- Claude Code (claude-work), as its screen showed it ---",
      "> please rename parse to parseLine",
      "Renamed parse to parseLine.",
      "tests pass",
      "",
      "--- Codex CLI (codex), as its screen showed it ---",
      "• Renamed the tests as well.",
      "› and the docs?",
    ]);
  });

  it("keeps every run's part, in order", () => {
    const second = { entry: "codex", name: "Codex CLI", conversation: "> now add tests\nAdded three tests.", stopText: "You've hit your usage limit." };
    const handoff = buildHandoff({ parts: [part, second], canReadFile: true, maxSize: 100_000, transcriptFile: "t" });
    expect(handoff.transcript.split("\n").filter((line) => line.startsWith("---"))).toEqual(["--- Claude Code (claude-work), as its screen showed it ---", "--- Codex CLI (codex), as its screen showed it ---"]);
    expect(handoff.prompt).toContain("You are continuing a conversation from Codex CLI (codex), whose usage allowance ran out; before it, Claude Code (claude-work) took part.");
  });

  it("carries only the end of a long conversation, and names the file that holds all of it", () => {
    const long = { ...part, conversation: Array.from({ length: 5000 }, (_, i) => `line ${i} of a long session`).join("\n") };
    const handoff = buildHandoff({ parts: [long], canReadFile: true, maxSize: 4000, transcriptFile: "/data/sessions/x/transcript-1.txt" });
    expect(handoff.trimmed).toBe(true);
    expect(handoff.prompt.length).toBeLessThanOrEqual(4000);
    expect(handoff.prompt).toContain(
      "The conversation is longer than one prompt can carry, so only its latest turns follow, each whole; the whole of it is saved in /data/sessions/x/transcript-1.txt.",
    );
    expect(handoff.prompt.trimEnd().endsWith("line 4999 of a long session")).toBe(true);
    expect(handoff.transcript.split("\n")).toHaveLength(5001);
  });
});

describe("the handoff cut at the stop message", () => {
  const BANNER = "You've hit your weekly limit · resets Dec 3, 9am (Europe/Berlin)";
  const plan = ["> please split the parser", "Here is my plan:", "  1. read the parser", "  2. split it into three functions", "  3. add a test for each"];
  const menu = ["", " What do you want to do?", " ❯ 1. Stop and wait for limit to reset", "   2. Upgrade your plan", "› /exit", "Goodbye."];
  // The transcript the next agent gets of one run of the plan agent stopped by BANNER, line by line.
  const planTranscript = (conversation: string): string[] =>
    buildHandoff({ parts: [{ entry: "plan", name: "Stand-in plan", conversation, stopText: BANNER }], canReadFile: true, maxSize: 100_000, transcriptFile: "t" }).transcript.split("\n");

  // What the detector records for one batch of drawn lines, as a run would see it.
  function stopTextOf(lines: string[]): string {
    const detector = new Detector({ quietMs: 300, dismissMs: 20_000, classify: (text) => classifyText(text, { now: new Date("2026-11-30T12:00:00Z"), timeZone: "Europe/Berlin" }) });
    detector.observe(lines, 0);
    const [stop] = detector.tick(300);
    expect(stop?.type).toBe("stop");
    return stop!.text;
  }

  it("records the limit message alone when the agent drew a plan and the banner in one write", () => {
    expect(stopTextOf([...plan, BANNER, ...menu])).toBe(BANNER);
    expect(stopTextOf(["Step one is done. ⎿  " + BANNER])).toBe(BANNER);
  });

  it("keeps every line before the message, and leaves out the message and all that follows it", () => {
    const conversation = [...plan, BANNER, ...menu].join("\n");
    const handoff = buildHandoff({ parts: [{ entry: "plan", name: "Stand-in plan", conversation, stopText: stopTextOf([...plan, BANNER, ...menu]) }], canReadFile: true, maxSize: 100_000, transcriptFile: "t" });
    expect(handoff.transcript.split("\n")).toEqual(["--- Stand-in plan (plan), as its screen showed it ---", ...plan]);
  });

  it("keeps the words before the message on its own line, drawn between escape sequences", () => {
    const conversation = ["\x1b[1mHere is my plan:\x1b[0m", "  \x1b[2m1.\x1b[0m read the \x1b[36mparser\x1b[0m", `\x1b[32mStep one is done.\x1b[0m \x1b[33m⎿  ${BANNER}\x1b[0m`, ...menu].join("\n");
    expect(planTranscript(conversation)).toEqual(["--- Stand-in plan (plan), as its screen showed it ---", "Here is my plan:", "  1. read the parser", "Step one is done."]);
  });

  it("finds the message where the terminal wrapped it, and leaves a lone bullet before it out", () => {
    // the reader joined the wrapped rows with a space; the screen model joined them without one
    const conversation = ["I renamed the helper.", `  ⎿  ${BANNER}`, "Goodbye."].join("\n");
    const stopText = "You've hit your weekly limit · resets Dec 3, 9am (Europe/ Berlin)";
    const handoff = buildHandoff({ parts: [{ entry: "plan", name: "Stand-in plan", conversation, stopText }], canReadFile: true, maxSize: 100_000, transcriptFile: "t" });
    expect(handoff.transcript.split("\n")).toEqual(["--- Stand-in plan (plan), as its screen showed it ---", "I renamed the helper."]);
  });

  it("cuts at the message's last showing: a banner the user quoted earlier stays, with the turns after it", () => {
    const conversation = [
      "I renamed the helper.",
      `> it said ${BANNER} yesterday; is that still so?`,
      "It was lifted this morning; carrying on with the tests.",
      `  ⎿  ${BANNER}`,
      ...menu,
    ].join("\n");
    expect(planTranscript(conversation)).toEqual([
      "--- Stand-in plan (plan), as its screen showed it ---",
      "I renamed the helper.",
      `> it said ${BANNER} yesterday; is that still so?`,
      "It was lifted this morning; carrying on with the tests.",
    ]);
  });

  it("keeps a showing the agent worked past (dismissed) and the two turns after it, and cuts at the one that stopped it", () => {
    const conversation = [
      "> please split the parser",
      `Step one is done. ⎿  ${BANNER}`,
      "> carry on anyway",
      "Split it into three functions.",
      "> now add a test for each",
      "Added three tests; all pass.",
      `⎿  ${BANNER}`,
      ...menu,
    ].join("\n");
    expect(planTranscript(conversation)).toEqual([
      "--- Stand-in plan (plan), as its screen showed it ---",
      "> please split the parser",
      `Step one is done. ⎿  ${BANNER}`,
      "> carry on anyway",
      "Split it into three functions.",
      "> now add a test for each",
      "Added three tests; all pass.",
    ]);
  });
});

describe("the handoff on hostile text", () => {
  const BANNER = "You've hit your weekly limit · resets Dec 3, 9am (Europe/Berlin)";

  it("cuts a line of 300,000 characters that ends in the banner, keeping the words before it", () => {
    const words = "word ".repeat(60_000).trimEnd();
    const handoff = buildHandoff({ parts: [{ entry: "plan", name: "Stand-in plan", conversation: `${words} ${BANNER}\nGoodbye.`, stopText: BANNER }], canReadFile: true, maxSize: 10_000_000, transcriptFile: "t" });
    expect(handoff.transcript).toBe(`--- Stand-in plan (plan), as its screen showed it ---\n${words}`);
  });

  it("keeps a line of 300,000 blanks between a word and a border, and takes a panel's border off the end of a long line", () => {
    const blanks = " ".repeat(300_000);
    const conversation = [`a${blanks}│ b`, `│ c${blanks}d${blanks}│`].join("\n");
    const handoff = buildHandoff({ parts: [{ entry: "plan", name: "Stand-in plan", conversation }], canReadFile: true, maxSize: 10_000_000, transcriptFile: "t" });
    expect(handoff.transcript).toBe(`--- Stand-in plan (plan), as its screen showed it ---\na${blanks}│ b\nc${blanks}d`);
  });
});

describe("the handoff on hostile sizes", () => {
  it("builds a prompt that fits from a pasted request of 100,000 lines, 2,000 typed lines the screen never showed and a turn of 10 MB", () => {
    const pasted = Array.from({ length: 100_000 }, (_, i) => `log line ${i}`).join("\n");
    const screen = { entry: "plan", name: "Stand-in plan", conversation: Array.from({ length: 5000 }, (_, i) => `screen line ${i}`).join("\n"), typed: Array.from({ length: 2000 }, (_, i) => `never shown ${i}`) };
    const file = { entry: "codex", name: "Codex CLI", conversation: "", transcript: { file: "f", turns: [{ role: "agent" as const, text: "x".repeat(10_000_000) }, { role: "user" as const, text: pasted }] } };
    const handoff = buildHandoff({ parts: [screen, file], maxSize: MAX_PROMPT_SIZE, transcriptFile: "t", canReadFile: true });
    expect(promptSize(handoff.prompt)).toBeLessThanOrEqual(MAX_PROMPT_SIZE);
    expect(handoff.prompt).toContain("quoted here whole:\n\n> log line 0\n> log line 1\n");
    expect(handoff.prompt).toContain("(its end is cut here; the whole of it is in the conversation below or the saved transcript)");
    expect(handoff.transcript.length).toBeGreaterThan(10_000_000);
  });
});

describe("what the handoff hands on", () => {
  it("shows a name or entry with control characters escaped, in the preamble and the section header", () => {
    const hostile = { entry: "evil\x1b]0;pwned\x07", name: "Evil\x1b[2J\u009b31m", conversation: "> hello\nhi" };
    const handoff = buildHandoff({ parts: [hostile], canReadFile: true, maxSize: 100_000, transcriptFile: "t" });
    expect(handoff.prompt.startsWith("You are continuing a conversation from Evil\\u001b[2J\\u009b31m (evil\\u001b]0;pwned\\u0007), whose usage allowance ran out.")).toBe(true);
    expect(handoff.transcript.split("\n")[0]).toBe("--- Evil\\u001b[2J\\u009b31m (evil\\u001b]0;pwned\\u0007), as its screen showed it ---");
    expect(handoff.prompt).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
  });

  it("passes the transcript and the preamble through the session's redactor", () => {
    const redactor = new Redactor([/sk-live-[A-Za-z0-9]{8,}/g], ["acct-7c1d2e3f"]);
    const conversation = ["> use acct-7c1d2e3f", "The key is sk-live-4f9a8b7c", "  6d5e4f3a2b1c, in the settings."].join("\n");
    const handoff = buildHandoff({ parts: [{ entry: "plan", name: "Stand-in plan", conversation }], canReadFile: true, maxSize: 100_000, transcriptFile: "t", redact: (text) => redactor.redact(text) });
    expect(handoff.transcript.split("\n")).toEqual(["--- Stand-in plan (plan), as its screen showed it ---", "> use [redacted]", "The key is [redacted], in the settings."]);
    expect(handoff.prompt.endsWith("> use [redacted]\nThe key is [redacted], in the settings.\n")).toBe(true);
  });
});

// each built-in agent's own interface, as its manifest's chrome patterns describe it
const manifests = new Map((await loadBuiltInManifests()).map((manifest) => [manifest.id, manifest]));

describe("the handoff without chrome", () => {
  const chromeOf = (id: string): ((line: string) => boolean) | undefined => compileLinePatterns(manifests.get(id)!.chrome ?? []);
  const transcriptOf = (part: { entry: string; name: string; conversation: string[]; chrome?: (line: string) => boolean }): string[] =>
    buildHandoff({ parts: [{ ...part, conversation: part.conversation.join("\n") }], canReadFile: true, maxSize: 100_000, transcriptFile: "t" }).transcript.split("\n").slice(1);

  it.each([
    {
      id: "claude-code",
      conversation: [
        "❯ add a test for the empty input",
        "● Added the test; all 42 pass.",
        "✻ Crunching… (12s · esc to interrupt)",
        "  ⎿  Read 212 lines (ctrl+o to expand)",
        "╭──────────────────────╮",
        "│ >                    │",
        "╰──────────────────────╯",
        "  ? for shortcuts · ← for agents",
        "  ⏵⏵ accept edits on (shift+tab to cycle)",
        "  Context left until auto-compact: 12%",
      ],
      kept: ["❯ add a test for the empty input", "● Added the test; all 42 pass."],
    },
    {
      id: "codex",
      conversation: [
        "› explain the parser",
        "• The parser reads one line at a time.",
        "• Working (8s • esc to interrupt)",
        "› Ask Codex to do anything",
        "  ? for shortcuts                                      100% context left",
      ],
      kept: ["› explain the parser", "• The parser reads one line at a time."],
    },
    {
      id: "gemini",
      conversation: [
        "> explain the parser",
        "✦ The parser reads one line at a time.",
        "⠏ Thinking... (esc to cancel, 3s)",
        "╭────────────────────────────────────────╮",
        "│ >   Type your message or @path/to/file │",
        "╰────────────────────────────────────────╯",
        " Shift+Tab to accept edits",
      ],
      kept: ["> explain the parser", "✦ The parser reads one line at a time."],
    },
  ])("leaves out the footers, hints and input box that the manifest of $id describes", ({ id, conversation, kept }) => {
    expect(transcriptOf({ entry: id, name: manifests.get(id)!.name, conversation, chrome: chromeOf(id) })).toEqual(kept);
  });

  it("leaves out, for an agent nobody described, lines without words and lines of keyboard hints only", () => {
    const conversation = [
      "> which keys stop it?",
      "Press esc to interrupt it, or type ? for shortcuts.",
      "Press Ctrl+C again to exit.",
      "Enter to confirm · Esc to cancel",
      "(ctrl+x to quit)",
      "  ❯  ",
      "  ⠋⠙⠹",
      "│                │",
      "? for shortcuts",
      "✻ Crunching… (12s · esc to interrupt)",
    ];
    // what one agent draws in particular stays, for an agent whose manifest does not say it is chrome
    expect(transcriptOf({ entry: "plan", name: "Stand-in plan", conversation })).toEqual([
      "> which keys stop it?",
      "Press esc to interrupt it, or type ? for shortcuts.",
      "? for shortcuts",
      "✻ Crunching… (12s · esc to interrupt)",
    ]);
  });
});

describe("the handoff's size", () => {
  const turns = (count: number, words: string): { role: "user" | "agent"; text: string }[] =>
    Array.from({ length: count }, (_, i) => ({ role: i % 2 ? "agent" : "user", text: `${i}: ${words}` }));
  const chinese = "灯塔位于北码头，漆成藏红花黄色，高十九米，建于一八七四年。".repeat(8);

  it("is bounded in UTF-8 bytes: a conversation in Chinese fits one argument, with the latest turns whole", () => {
    const said = turns(300, chinese);
    const part = { entry: "claude-code", name: "Claude Code", conversation: "", transcript: { file: "f", turns: said } };
    const handoff = buildHandoff({ parts: [part], maxSize: MAX_PROMPT_SIZE, transcriptFile: "/data/sessions/x/transcript-1.txt", canReadFile: true });
    expect(handoff.trimmed).toBe(true);
    expect(promptSize(handoff.prompt)).toBeLessThanOrEqual(MAX_PROMPT_SIZE);
    expect(promptSize(handoff.prompt)).toBeGreaterThan(MAX_PROMPT_SIZE - 2000);
    // the system takes it as one argument
    expect(spawnSync(process.execPath, ["-e", "0", handoff.prompt]).error).toBeUndefined();
    // every turn it carries is whole, the newest last
    const body = handoff.prompt.slice(handoff.prompt.indexOf("\n\n--- Claude Code (claude-code), from its transcript, its earlier turns left out ---\n"));
    const carried = body.split("\n").slice(3).filter((line) => line !== "" && line !== "User: (the user's last request, quoted at the top)");
    expect(body).not.toBe("");
    expect(handoff.prompt).toContain(`quoted here whole:\n\n> 298: ${chinese}\n\n--- Claude Code`);
    expect(carried.at(-1)).toBe(`Claude Code: 299: ${chinese}`);
    for (const line of carried) expect(said.some((turn) => line === `${turn.role === "user" ? "User" : "Claude Code"}: ${turn.text}`)).toBe(true);
    expect(carried.length).toBeGreaterThan(50);
    expect(handoff.transcript.split("\n").filter((line) => line !== "")).toHaveLength(301);
  });

  it("would not fit if it were counted in characters: the system refuses such an argument", () => {
    const counted = chinese.repeat(Math.floor(MAX_PROMPT_SIZE / chinese.length));
    expect(counted.length).toBeLessThanOrEqual(MAX_PROMPT_SIZE);
    expect(spawnSync(process.execPath, ["-e", "0", counted]).error).toMatchObject({ code: "E2BIG" });
  });

  it("is counted in UTF-16 units on Windows, where an emoji is two", () => {
    expect(promptSize("灯塔 🗼", "linux")).toBe(11);
    expect(promptSize("灯塔 🗼", "win32")).toBe(5);
  });

  it("says the earlier part is kept where the next agent cannot read it, rather than naming the file", () => {
    const part = { entry: "codex", name: "Codex CLI", conversation: "", transcript: { file: "f", turns: turns(400, "a long turn ".repeat(20)) } };
    const handoff = buildHandoff({ parts: [part], maxSize: 20_000, transcriptFile: "/data/sessions/x/transcript-1.txt", canReadFile: false });
    expect(handoff.prompt).toContain(
      "The conversation is longer than one prompt can carry, so only its latest turns follow, each whole; uuldana saved the whole of it outside this project, where you cannot read it: ask the user if you need an earlier detail.",
    );
    expect(handoff.prompt).not.toContain("/data/sessions");
  });
});

describe("a run's part from its transcript", () => {
  const PROMPT = "You are continuing a conversation from Claude Code (claude-code).\n\n--- Claude Code (claude-code), from its transcript ---\nUser: which file?";

  it("leaves out the handoff prompt the agent recorded as the user's, makes a tool call one line and strips control sequences", () => {
    const part = {
      entry: "codex",
      name: "Codex CLI",
      conversation: "",
      prompt: PROMPT,
      transcript: {
        file: "f",
        turns: [
          { role: "user" as const, text: PROMPT.replace(/\n/g, "\r\n") },
          { role: "tool" as const, text: "exec:\n  npm\ttest\x1b[31m" },
          { role: "agent" as const, text: "All \x1b[1mtests\x1b[0m pass.\x07" },
        ],
      },
    };
    expect(buildHandoff({ parts: [part], maxSize: 100_000, transcriptFile: "t", canReadFile: true }).transcript).toBe(
      ["--- Codex CLI (codex), from its transcript ---", "Codex CLI (tool): exec: npm test", "", "Codex CLI: All tests pass."].join("\n"),
    );
  });

  it("takes a line the user sent that the file does not have yet, with what followed it, from the screen", () => {
    const part = {
      entry: "codex",
      name: "Codex CLI",
      conversation: ["› first question", "• first answer", "› second question", "• a half-drawn answer", "■ You've hit your usage limit."].join("\n"),
      stopText: "You've hit your usage limit.",
      typed: ["first question", "second question"],
      transcript: { file: "f", turns: [{ role: "user" as const, text: "first question" }, { role: "agent" as const, text: "first answer" }] },
    };
    const handoff = buildHandoff({ parts: [part], maxSize: 100_000, transcriptFile: "t", canReadFile: true });
    expect(handoff.prompt.split("\n\n").at(1)).toBe("Continue with the user's last request, quoted here whole:");
    expect(handoff.transcript).toBe(
      [
        "--- Codex CLI (codex), from its transcript ---",
        "User: first question",
        "",
        "Codex CLI: first answer",
        "",
        "(on its screen after the end of its transcript)",
        "(the user's last request, quoted at the top)",
        "• a half-drawn answer",
      ].join("\n"),
    );
    expect(handoff.prompt).toContain("quoted here whole:\n\n> second question\n\n--- Codex CLI (codex)");
  });
});

describe("the lines the user typed, a floor for each run's part", () => {
  const LIMIT = "You've hit your usage limit.";
  const NO_ANSWER = "(Stand-in plan's answer to this was not on its screen)";
  const MARK = "(the user's last request, quoted at the top)";
  const screen = (conversation: string[], typed: string[], more: Record<string, unknown> = {}): RunPart => ({
    entry: "plan",
    name: "Stand-in plan",
    conversation: [...conversation, LIMIT].join("\n"),
    stopText: LIMIT,
    typed,
    ...more,
  });
  const transcript = (turns: [Turn["role"], string][], typed: string[], conversation: string[] = []): RunPart => ({
    entry: "codex",
    name: "Codex CLI",
    conversation: conversation.join("\n"),
    stopText: LIMIT,
    typed,
    transcript: { file: "f", turns: turns.map(([role, text]) => ({ role, text })) },
  });
  // The transcript the next agent gets, line by line, without the section's header, and the request quoted at the top.
  const handedOn = (parts: RunPart[]): { lines: string[]; request: string | undefined } => {
    const handoff = buildHandoff({ parts, canReadFile: true, maxSize: MAX_PROMPT_SIZE, transcriptFile: "t" });
    const quoted = /quoted here whole:\n\n((?:> .*\n)+)\n---/.exec(handoff.prompt)?.[1];
    return { lines: handoff.transcript.split("\n").slice(1), request: quoted?.trimEnd().replace(/^> /gm, "") };
  };

  it.each([
    {
      name: "a transcript that has every line: nothing is inserted",
      parts: [transcript([["user", "which file holds the parser?"], ["agent", "src/parse.ts"], ["user", "split it into three functions"], ["agent", "Split it."]], ["which file holds the parser?", "split it into three functions"])],
      lines: ["User: which file holds the parser?", "", "Codex CLI: src/parse.ts", "", `User: ${MARK}`, "", "Codex CLI: Split it."],
      request: "split it into three functions",
    },
    {
      name: "a screen drawn over before the last request: it is inserted at the end, quoted, and said to have no answer",
      parts: [screen(["› which file holds the parser?", "The parser is in src/parse.ts."], ["which file holds the parser?", "split it into three functions"])],
      lines: ["› which file holds the parser?", "The parser is in src/parse.ts.", "", `User: ${MARK}`, NO_ANSWER],
      request: "split it into three functions",
    },
    {
      name: "a screen without a request of the middle: it is inserted before the next one shown",
      parts: [screen(["› which file holds the parser?", "src/parse.ts", "› and add a test", "Added one."], ["which file holds the parser?", "split it into three functions", "and add a test"])],
      lines: ["› which file holds the parser?", "src/parse.ts", "", "User: split it into three functions", NO_ANSWER, "", MARK, "Added one."],
      request: "and add a test",
    },
    {
      name: "a screen without the first request: it is inserted before the next one shown",
      parts: [screen(["Welcome to the plan stand-in", "› and add a test", "Added one."], ["which file holds the parser?", "and add a test"])],
      lines: ["Welcome to the plan stand-in", "", "User: which file holds the parser?", NO_ANSWER, "", MARK, "Added one."],
      request: "and add a test",
    },
    {
      name: "a request typed twice, both shown",
      parts: [screen(["› run the tests", "2 failed.", "› fix the failing one", "Fixed it.", "› run the tests", "All pass."], ["run the tests", "fix the failing one", "run the tests"])],
      lines: ["› run the tests", "2 failed.", "› fix the failing one", "Fixed it.", MARK, "All pass."],
      request: "run the tests",
    },
    {
      name: "a request typed twice, its first showing scrolled away",
      parts: [screen(["› fix the failing one", "Fixed it.", "› run the tests", "All pass."], ["run the tests", "fix the failing one", "run the tests"])],
      lines: ["User: run the tests", NO_ANSWER, "", "› fix the failing one", "Fixed it.", MARK, "All pass."],
      request: "run the tests",
    },
    {
      name: "a request typed twice, its second showing drawn over",
      parts: [screen(["› run the tests", "2 failed.", "› fix the failing one", "Fixed it."], ["run the tests", "fix the failing one", "run the tests"])],
      lines: ["› run the tests", "2 failed.", "› fix the failing one", "Fixed it.", "", `User: ${MARK}`, NO_ANSWER],
      request: "run the tests",
    },
    {
      name: "echoes wrapped inside a panel, indented, prefixed and cut short with an ellipsis",
      parts: [
        screen(
          ["│ > please rename parse to parseLine in every │", "│   file under src                            │", "Renamed it in 4 files.", "  ❯ Now run the linter", "Lint is clean.", "› and write the changelog entry for the rena…", "Wrote it."],
          ["please rename parse to parseLine in every file under src", "now run the linter", "and write the changelog entry for the rename"],
        ),
      ],
      lines: ["> please rename parse to parseLine in every", "  file under src", "Renamed it in 4 files.", "  ❯ Now run the linter", "Lint is clean.", MARK, "Wrote it."],
      request: "and write the changelog entry for the rename",
    },
    {
      name: "a typed line that only begins a longer line of the screen: that line is not its echo",
      parts: [screen(["› which tests are slow?", "Run the tests with --slow to list them."], ["which tests are slow?", "run the tests"])],
      lines: ["› which tests are slow?", "Run the tests with --slow to list them.", "", `User: ${MARK}`, NO_ANSWER],
      request: "run the tests",
    },
    {
      name: "a shown request the agent did not answer before the next one",
      parts: [screen(["› split the parser", "› no, only the lexer", "Split the lexer out."], ["split the parser", "no, only the lexer"])],
      lines: ["› split the parser", NO_ANSWER, MARK, "Split the lexer out."],
      request: "no, only the lexer",
    },
    {
      name: "the last request, shown and unanswered, in a run that ended without a limit",
      parts: [{ entry: "plan", name: "Stand-in plan", conversation: "› which file holds the parser?\nsrc/parse.ts\n› and the lexer?", typed: ["which file holds the parser?", "and the lexer?"] }],
      lines: ["› which file holds the parser?", "src/parse.ts", MARK, NO_ANSWER],
      request: "and the lexer?",
    },
    {
      name: "a line neither the transcript nor the screen has",
      parts: [transcript([["user", "which file holds the parser?"], ["agent", "src/parse.ts"]], ["which file holds the parser?", "split it into three functions"], ["› which file holds the parser?", "• src/parse.ts"])],
      lines: ["User: which file holds the parser?", "", "Codex CLI: src/parse.ts", "", `User: ${MARK}`, "(Codex CLI's answer to this was not in its transcript)"],
      request: "split it into three functions",
    },
    {
      name: "a later run whose screen shows none of its lines: its last one is quoted, not the earlier run's",
      parts: [screen(["› which file holds the parser?", "src/parse.ts"], ["which file holds the parser?"]), { ...screen(["Working…"], ["split it into three functions"]), entry: "plan2" }],
      lines: ["› which file holds the parser?", "src/parse.ts", "", "--- Stand-in plan (plan2), as its screen showed it ---", "Working…", "", `User: ${MARK}`, NO_ANSWER],
      request: "split it into three functions",
    },
  ])("$name", ({ parts, lines, request }) => {
    expect(handedOn(parts)).toEqual({ lines, request });
  });

  it("places every line of a long session once, in order, when there are too many to align one by one", () => {
    const asked = Array.from({ length: 2100 }, (_, i) => `question ${i}`);
    const shown = asked.flatMap((line, i) => [`› ${line}`, `answer ${i}`]);
    const { lines, request } = handedOn([screen(shown, asked)]);
    expect(lines).toEqual([...shown.slice(0, -2), MARK, "answer 2099"]);
    expect(request).toBe("question 2099");
  });
});
