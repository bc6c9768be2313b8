import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { describe, expect, it } from "vitest";

import type { ProviderAdapter, Turn } from "../core/index.js";
import { classifyText } from "../core/reader/reader.js";
import { loadAdapter } from "../core/registry/adapter.js";
import { loadManifestFile } from "../core/registry/manifest.js";
import claudeCode from "../providers/claude-code.js";
import codex from "../providers/codex.js";
import gemini from "../providers/gemini.js";
import { fixtures, root } from "./helpers.js";

// The built-in adapters against screens the real CLIs drew (test/fixtures/screens/README.md says how each was
// captured). Pure: no process is started.

const text = (id: string, file: string): string => readFileSync(join(fixtures, "screens", id, file), "utf8");
const rows = (id: string, file: string): string[] => text(id, file).split("\n");

// The adapter's classify as the general reader takes it, and what the reader then says at a fixed instant.
function readWith(adapter: ProviderAdapter, said: string): { stop: boolean; reset_at: string | null; reasons: string[] } {
  const provider = (part: string): { stop: boolean; reason: string } | undefined => {
    const verdict = adapter.classify!(part);
    return verdict && { stop: verdict.stop, reason: verdict.reason ?? "" };
  };
  const { stop, reset_at, reasons } = classifyText(said, { now: new Date("2026-12-01T16:57:00Z"), timeZone: "UTC", provider });
  return { stop, reset_at, reasons };
}

const NATIVE_WAIT = { stop: true, reason: 'Claude Code waits for its limit to reset by itself ("Continuing automatically at 6:27pm · Esc to cancel")' };
const MENU = { stop: true, reason: 'Claude Code\'s limit menu is open ("1. Stop and wait for limit to reset")' };
const NOT_INCLUDED = { stop: true, reason: 'Codex says this plan does not include it ("To use Codex with your ChatGPT plan, upgrade to Plus: https://chatgpt.com/explore/plus.")' };

describe("the built-in manifests", () => {
  it("say how each was checked: binary exactly for those the real-agent checks install and run, documentation else", async () => {
    const { harnesses } = (await import(join(root, "test", "real", "harness.mjs"))) as { harnesses: Record<string, unknown> };
    const verified: Record<string, string | undefined> = {};
    for (const file of readdirSync(join(root, "manifests"))) {
      const manifest = JSON.parse(readFileSync(join(root, "manifests", file), "utf8")) as { id: string; verified?: string };
      verified[manifest.id] = manifest.verified;
    }
    for (const [id, how] of Object.entries(verified)) expect(how, id).toBe(id in harnesses ? "binary" : "documentation");
    expect(Object.keys(harnesses).sort()).toEqual(Object.keys(verified).filter((id) => verified[id] === "binary").sort());
  });

  it.each([
    ["claude-code", ["busy", "classify", "conversation", "launchSettings", "quota", "quotaFiles", "transcript"]],
    ["codex", ["busy", "classify", "conversation", "quota", "quotaFiles", "transcript"]],
    ["gemini", ["busy", "conversation", "transcript"]],
  ])("name %s's compiled adapter, which loads with its hooks", async (id, hooks) => {
    const record = await loadManifestFile(join(root, "manifests", `${id}.json`), "built-in");
    expect(record.error).toBeUndefined();
    expect(record.manifest!.adapter).toBe(`../dist/providers/${id}.js`);
    const adapter = await loadAdapter(record);
    expect(Object.keys(adapter!).sort()).toEqual(hooks);
  });
});

describe("Claude Code's adapter", () => {
  it.each([
    ["2.1.332-ready.txt", undefined],
    ["2.1.332-answer.txt", undefined],
    ["2.1.332-busy.txt", undefined],
    // "You've used 93% of your 5-hour limit": a warning
    ["2.1.332-warning.txt", undefined],
    ["2.1.197-warning.txt", undefined],
    // the banner, then its native wait in the footer: "Continuing automatically at 6:27pm · Esc to cancel"
    ["2.1.332-limit-session.txt", NATIVE_WAIT],
    ["2.1.332-limit-session.conversation.txt", NATIVE_WAIT],
    // the wait cancelled: only the banner is left, which the general reader reads
    ["2.1.332-limit-session-escaped.txt", undefined],
    ["2.1.332-limit-weekly-menu.txt", MENU],
    ["2.1.332-limit-opus.txt", MENU],
    ["2.1.197-limit-session.txt", MENU],
  ])("classify: %s", (file, expected) => {
    expect(claudeCode.classify(text("claude-code", file))).toEqual(expected);
  });

  it("classify: the native wait and the menu drawn alone, without the banner", () => {
    expect(claudeCode.classify("  ⚠ Usage limit reached · limit resets 6:27pm\n    Continuing automatically at 6:27pm · Esc to cancel")).toEqual(NATIVE_WAIT);
    expect(claudeCode.classify("    Continuing automatically at 7pm · esc or type to cancel")).toEqual({
      stop: true,
      reason: 'Claude Code waits for its limit to reset by itself ("Continuing automatically at 7pm · esc or type to cancel")',
    });
    const menu = text("claude-code", "2.1.332-limit-weekly-menu.txt").trimEnd().split("\n").slice(-7).join("\n");
    expect(menu).toBe(
      "  What do you want to do?\n\n  ❯ 1. Stop and wait for limit to reset\n    2. Wait here, then continue automatically at 6:27pm\n    3. Upgrade your plan\n\n  Enter to confirm · Esc to cancel",
    );
    expect(claudeCode.classify(menu)).toEqual(MENU);
    // the cursor moved: the option lines redrawn, with the hint
    expect(claudeCode.classify("    1. Stop and wait for limit to reset\n  ❯ 2. Wait here, then continue automatically at 6:27pm\n  Enter to confirm · Esc to cancel")).toEqual(MENU);
  });

  it("classify: no stop for its warnings, the wait ending, the options quoted, or another menu", () => {
    const none = [
      // wording of Claude Code 2.1.332 (its bundle), not drawn in the captures
      "Approaching your 5-hour usage limit — Claude will wrap up the current step.",
      "● Usage limit reset · Continuing automatically",
      "● Automatic continue cancelled · /rate-limit-options to wait again",
      // an answer that quotes the menu, and code that holds its words
      '● The menu offers "1. Stop and wait for limit to reset" and "2. Upgrade your plan".',
      '  const label = "Stop and wait for limit to reset";',
      // an option without its menu's title or hint
      "  ❯ 1. Stop and wait for limit to reset",
      // its permission dialog (wording of 2.1.332)
      " Do you want to proceed?\n ❯ 1. Yes\n   2. No, and tell Claude what to do differently (esc)\n Esc to cancel",
      "Continuing automatically at 6:27pm · Esc to cancel".repeat(20),
    ];
    for (const said of none) expect(claudeCode.classify(said), said).toBeUndefined();
  });

  it("classify, weighed by the general reader: a stop with the reset its wait names; the banner needs no adapter", () => {
    expect(readWith(claudeCode, "    Continuing automatically at 6:27pm · Esc to cancel")).toEqual({
      stop: true,
      reset_at: "2026-12-01T18:28:00.000Z",
      reasons: [NATIVE_WAIT.reason],
    });
    expect(readWith(claudeCode, text("claude-code", "2.1.332-limit-session-escaped.txt"))).toMatchObject({ stop: true, reset_at: "2026-12-01T18:28:00.000Z" });
    expect(readWith(claudeCode, text("claude-code", "2.1.332-warning.txt")).stop).toBe(false);
  });

  it.each([
    ["2.1.332-ready.txt", false],
    ["2.1.332-answer.txt", false],
    // "✻ Determining…" above the input box, "⏸ manual mode on · esc to interrupt" under it
    ["2.1.332-busy.txt", true],
    ["2.1.332-busy-later.txt", true],
    ["2.1.197-busy.txt", true],
    ["2.1.332-warning.txt", false],
    ["2.1.332-limit-session.txt", false],
    ["2.1.332-limit-weekly-menu.txt", false],
    ["2.1.197-limit-session.txt", false],
  ])("busy: %s", (file, expected) => {
    expect(claudeCode.busy(rows("claude-code", file))).toBe(expected);
  });

  it("busy: the words of its footer in the conversation above the box are not a running turn", () => {
    const screen = rows("claude-code", "2.1.332-answer.txt");
    const answer = screen.findIndex((line) => line.startsWith("● "));
    screen.splice(answer + 1, 0, "  Press esc to interrupt a turn.", "✻ Brewing…");
    expect(claudeCode.busy(screen)).toBe(false);
  });

  const answer: Turn[] = [
    { role: "user", text: "Which colour is the lighthouse on the north pier?" },
    { role: "agent", text: "The lighthouse on the north pier is painted saffron yellow.\n\nIt has:\n- a red lantern room\n- a white gallery\n\nAsk me if you want its height." },
  ];

  it("conversation: prompts and answers, without its banner, input box, spinner or footer", () => {
    expect(claudeCode.conversation(text("claude-code", "2.1.197-answer.conversation.txt"))).toEqual(answer);
    expect(claudeCode.conversation(text("claude-code", "2.1.332-answer.txt"))).toEqual(answer);
  });

  it("conversation: a tool's summary and the limit banner under a prompt are the agent's; its notices are no one's", () => {
    // on its alternate screen 2.1.332 is read back as what it showed, merged: blank lines and the first line of the
    // first answer are missing, so that answer's indented lines read as the prompt's
    expect(claudeCode.conversation(text("claude-code", "2.1.332-limit-session.conversation.txt"))).toEqual([
      { role: "user", text: "Which colour is the lighthouse on the north pier?\nIt has:\n- a red lantern room\n- a white gallery\nAsk me if you want its height." },
      { role: "user", text: "Read notes.txt and tell me what it says" },
      { role: "agent", text: "I'll read the notes.\nRead 1 file\n\nThe notes say the north pier lighthouse is saffron and it was built in 1874." },
      { role: "user", text: "How tall is it?" },
      { role: "agent", text: "After a long think: the lighthouse is nineteen metres tall." },
      { role: "user", text: "When was it built?" },
      { role: "agent", text: "It was built in 1874." },
      { role: "user", text: "And who built it?" },
      { role: "agent", text: "You've hit your 5-hour limit · resets 6:27pm (UTC)" },
    ]);
    expect(claudeCode.conversation(text("claude-code", "2.1.332-limit-weekly-menu.txt"))).toEqual([
      { role: "user", text: "And who built it?" },
      { role: "agent", text: "You've hit your weekly limit · resets 6:27pm (UTC)\n/upgrade to increase your usage limit." },
    ]);
    expect(claudeCode.conversation("")).toBeUndefined();
  });
});

describe("Codex CLI's adapter", () => {
  it.each([
    ["0.171.0-ready.txt", undefined],
    ["0.171.0-answer.txt", undefined],
    ["0.171.0-busy.txt", undefined],
    // "⚠ Heads up, you have less than 25% of your 5h limit left": a warning
    ["0.171.0-warning.txt", undefined],
    ["0.171.0-warning.conversation.txt", undefined],
    // the general reader stops on these itself
    ["0.171.0-limit-plus.txt", undefined],
    ["0.171.0-limit-free.txt", undefined],
    ["0.171.0-credits-depleted.txt", undefined],
    ["0.171.0-limit-model-nudge.txt", undefined],
    // "exceeded retry limit, last status: 429 Too Many Requests": a throttle as much as a limit, left to the reader
    ["0.171.0-retry-limit.txt", undefined],
    ["0.171.0-not-included.txt", NOT_INCLUDED],
  ])("classify: %s", (file, expected) => {
    expect(codex.classify(text("codex", file))).toEqual(expected);
  });

  it("classify: only its own error line, not the sentence quoted or in an answer", () => {
    const none = [
      '• Codex printed "To use Codex with your ChatGPT plan, upgrade to Plus" earlier.',
      "  To use Codex with your ChatGPT plan, upgrade to Plus: https://chatgpt.com/explore/plus.",
      "  Approaching rate limits\n  Switch to gpt-6-luna for lower credit usage?",
    ];
    for (const said of none) expect(codex.classify(said), said).toBeUndefined();
  });

  it("classify, weighed by the general reader: the plan error is a stop either way, an account one", () => {
    const said = rows("codex", "0.171.0-not-included.txt").find((line) => line.startsWith("■"))!;
    const general = classifyText(said, { now: new Date(), timeZone: "UTC" });
    expect([general.stop, general.kind, general.reset_at]).toEqual([true, "account", null]);
    expect(codex.classify(said)).toEqual({ stop: true, reason: NOT_INCLUDED.reason });
    expect(readWith(codex, said).stop).toBe(true);
  });

  it.each([
    ["0.171.0-ready.txt", false],
    ["0.171.0-answer.txt", false],
    // "◦ Working (3s • esc to interrupt)" just above the composer
    ["0.171.0-busy.txt", true],
    ["0.171.0-warning.txt", false],
    ["0.171.0-limit-plus.txt", false],
    // a dialog in place of the composer
    ["0.171.0-credits-depleted.txt", false],
  ])("busy: %s", (file, expected) => {
    expect(codex.busy(rows("codex", file))).toBe(expected);
  });

  it("conversation: messages and answers, without the header, composer, working line, notices or footer", () => {
    const first: Turn[] = [{ role: "user", text: "Which colour is the lighthouse on the north pier?" }];
    expect(codex.conversation(text("codex", "0.171.0-answer.txt"))).toEqual([
      ...first,
      { role: "agent", text: "The lighthouse on the north pier is painted saffron yellow.\n\nIt has:\n\n• a red lantern room\n• a white gallery\n\nAsk me if you want its height." },
    ]);
    // read back from its alternate screen, merged: the working lines it showed are in the text, blank lines are not
    expect(codex.conversation(text("codex", "0.171.0-warning.conversation.txt"))).toEqual([
      ...first,
      { role: "agent", text: "The lighthouse on the north pier is painted saffron yellow.\nIt has:\n• a red lantern room\n• a white gallery\nAsk me if you want its height." },
      { role: "user", text: "How tall is it?" },
      { role: "agent", text: "After a long think: the lighthouse is nineteen metres tall." },
      { role: "user", text: "When was it built?" },
      { role: "agent", text: "It was built in 1874." },
    ]);
    expect(codex.conversation(text("codex", "0.171.0-ready.txt"))).toBeUndefined();
  });

  it("conversation: its error after a message is the agent's side", () => {
    expect(codex.conversation(text("codex", "0.171.0-not-included.txt"))).toEqual([
      { role: "user", text: "And who built it?" },
      { role: "agent", text: "To use Codex with your ChatGPT plan, upgrade to Plus: https://chatgpt.com/explore/plus." },
    ]);
  });
});

describe("Gemini CLI's adapter", () => {
  it("has no classify: the reader stops on its quota dialog, and the dialog's options alone are no limit", () => {
    expect("classify" in gemini).toBe(false);
    for (const file of ["0.61.0-limit-pro.txt", "0.61.0-limit-flash.txt"]) {
      expect(classifyText(text("gemini", file), { now: new Date(), timeZone: "UTC" }).stop, file).toBe(true);
    }
  });

  it.each([
    ["0.61.0-ready.txt", false],
    ["0.61.0-answer.txt", false],
    // "⠹ Thinking... (esc to cancel, 3s)" above the input area
    ["0.61.0-busy.txt", true],
    // retrying for over a minute: "(esc to cancel, 1m 9s)"
    ["0.61.0-busy-retrying.txt", true],
    ["0.61.0-limit-pro.txt", false],
    ["0.61.0-limit-flash.txt", false],
  ])("busy: %s", (file, expected) => {
    expect(gemini.busy(rows("gemini", file))).toBe(expected);
  });

  it("conversation: messages and answers, without the banner, tips, input area or footer", () => {
    const answer = "The lighthouse on the north pier is painted saffron yellow.\n\nIt has:\n - a red lantern room\n - a white gallery\n\nAsk me if you want its height.";
    expect(gemini.conversation(text("gemini", "0.61.0-after-busy.conversation.txt"))).toEqual([
      { role: "user", text: "Which colour is the lighthouse on the north pier" },
      { role: "agent", text: answer },
      { role: "user", text: "How tall is it" },
      { role: "agent", text: "After a long think: the lighthouse is nineteen metres tall." },
    ]);
    expect(gemini.conversation(text("gemini", "0.61.0-ready.txt"))).toBeUndefined();
  });

  it("conversation: what its dialog box holds is the agent's side", () => {
    expect(gemini.conversation(text("gemini", "0.61.0-limit-flash.txt"))).toEqual([
      { role: "user", text: "And who built it" },
      { role: "agent", text: "Usage limit reached for gemini-2.5-flash.\n/stats model for usage details\n/model to switch models.\n\n● 1. Keep trying\n2. Stop" },
    ]);
  });
});

describe("the built-in adapters' hooks on a screen of 50 lines", () => {
  const cases: [string, ProviderAdapter, string][] = [
    ["claude-code", claudeCode, "2.1.332-limit-session.conversation.txt"],
    ["codex", codex, "0.171.0-warning.conversation.txt"],
    ["gemini", gemini, "0.61.0-limit-pro.txt"],
  ];

  it("give the same answer each of 1,000 calls (the time they took is printed, not asserted)", () => {
    const report: string[] = [];
    for (const [id, adapter, file] of cases) {
      const screen = rows(id, file).slice(-50);
      while (screen.length < 50) screen.unshift("");
      expect(screen).toHaveLength(50);
      const joined = screen.join("\n");
      for (const [name, hook] of Object.entries(adapter) as [string, (input: unknown) => unknown][]) {
        const input = name === "busy" || name === "ready" ? screen : joined;
        const results: unknown[] = [];
        const started = process.hrtime.bigint();
        for (let i = 0; i < 1000; i++) results.push(hook(input));
        const micros = Number(process.hrtime.bigint() - started) / 1000 / 1000;
        const first = JSON.stringify(results[0]);
        expect(results.filter((result) => JSON.stringify(result) === first), `${id} ${name}`).toHaveLength(1000);
        report.push(`${id} ${name}: ${micros.toFixed(1)} µs a call`);
      }
    }
    console.log(report.join("\n"));
  });
});
