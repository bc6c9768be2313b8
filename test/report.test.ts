import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { Redactor } from "../core/config/redaction.js";
import { DrawnLines, LINE_CHARS, TAIL_BYTES, TAIL_LINES, WINDOW_LINES } from "../core/host/drawn-lines.js";
import { code, fenced } from "../core/cli/markdown.js";
import { installAgents } from "./agents.js";
import { bin, LIMIT_RESET, makeSandbox, waitForJournal, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];
const KEY = "sk-report-0123456789abcdef";

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox, ["limit"]);
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

function open(args: string[], env: Record<string, string> = {}): TestTerminal {
  const terminal = new TestTerminal(process.execPath, [bin, ...args], { cwd: sandbox.project, env: { ...sandbox.env, TZ: "Europe/Berlin", ...env }, cols: 160 });
  terminals.push(terminal);
  return terminal;
}

// The one session in the sandbox, and its journal's events.
function theSession(): { id: string; folder: string; events: Record<string, unknown>[] } {
  const [id] = readdirSync(join(sandbox.data, "sessions"));
  const folder = join(sandbox.data, "sessions", id!);
  const events = readFileSync(join(folder, "journal.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
  return { id: id!, folder, events };
}

// What differs from one run to the next (the session id, the clock, the reset two days ahead), masked.
function mask(text: string): string {
  return text
    .replaceAll(LIMIT_RESET.text, "RESET_TEXT")
    .replaceAll(LIMIT_RESET.shown, "RESET")
    .replace(/\b[0-9][0-9a-z]{9}\b/g, "SESSION")
    .replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/g, "INSTANT");
}

// The reader's reasons for the candidate, as the report lists them (the reader's wording is its own business).
function reasons(events: Record<string, unknown>[]): string {
  const candidate = events.find((event) => event.type === "candidate")!;
  expect(candidate).toMatchObject({ stop: true, kind: "weekly", reset_at: LIMIT_RESET.iso });
  return (candidate.reasons as string[]).map((reason) => `  - ${mask(reason)}`).join("\n");
}

const PREFACE =
  "A candidate is text uuldana's reader took for a gone usage allowance. It became a stop when the agent then went quiet or exited with a failing status, and was dismissed when the agent kept working or when, read again with the lines the agent drew after it, it was no stop. The lines are the agent's as uuldana's screen model read them, redacted as the session journal is (entries' env values and the config's `redact` matches are `[redacted]`); read them before you attach this file anywhere.";

describe("uuldana report", () => {
  it("says a candidate was dismissed because, read whole with the lines drawn after it, it was no stop", async () => {
    // the detail comes at a key typed once the error alone is a candidate in the journal, so the two are read apart
    // however loaded the machine; the quiet is long enough that the key comes well within it
    sandbox.write("config/config.json", { providers: ["limit"], auto_detect: false, quiet_seconds: 6, dismiss_seconds: 20 });
    const terminal = open(["run"], { LIMIT_MODE: "details" });
    await waitForJournal(sandbox.data, (event) => event.type === "candidate", "the error alone as a candidate in the journal");
    terminal.type("+");
    await terminal.waitFor("Please retry in 56.47s.", 20_000);
    // it is a dismissal, and the agent keeps running
    await waitForJournal(sandbox.data, (event) => event.type === "ignored", "the dismissal in the journal");
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    const { events } = theSession();
    expect(events.find((event) => event.type === "ignored")).toMatchObject({ why: "read whole", reasons: expect.arrayContaining(["not a stop: a rate limit per minute or a throttle that retries"]) });
    await sandbox.run(["report"]);
    const report = readFileSync(join(theSession().folder, "report.md"), "utf8");
    expect(mask(report).split("\n")).toContain(
      "- what happened: read again with the lines the agent drew after it, it was no stop (not a stop: a rate limit per minute or a throttle that retries), so at INSTANT uuldana dismissed it and left the agent running (the ⚠ mark)",
    );
  });

  it("writes a dismissed candidate with its verdict, what happened and the lines around it, redacted; --last adds each run's last lines", async () => {
    sandbox.write("config/config.json", { providers: [{ id: "limit", env: { REPORT_KEY: KEY } }], auto_detect: false, quiet_seconds: 1, dismiss_seconds: 2 });
    const terminal = open(["run"], { LIMIT_MODE: "report" });
    await terminal.waitFor("all 60 steps done", 20_000);
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    const { id, folder, events } = theSession();
    const file = join(folder, "report.md");

    const run = await sandbox.run(["report"]);
    expect(run).toEqual({ code: 0, stdout: `${file}\n`, stderr: "" });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const steps = Array.from({ length: WINDOW_LINES }, (_, i) => `step ${i + 1} of 60: edited file${i + 1}.ts`);
    const report = readFileSync(file, "utf8");
    expect(mask(report)).toBe(
      [
        "# uuldana report: session `SESSION`",
        "",
        "- uuldana 0.1.0, report written INSTANT",
        "- session started INSTANT under uuldana 0.1.0; ended (exit 0)",
        "- runs: `limit`",
        "- candidates: 1 (1 dismissed)",
        "",
        PREFACE,
        "",
        "## Run 1: `limit`",
        "",
        "- agent: Stand-in limit 1.0.0; provider `limit`, entry `limit`, at `ask`",
        "- started INSTANT; ended, exit 0",
        "",
        "### Candidate 1: dismissed",
        "",
        "- seen INSTANT",
        "- verdict: stop (score 8); kind `weekly`; reset RESET (times read in Europe/Berlin)",
        "- reasons:",
        reasons(events),
        "- what happened: the agent kept working for 2 s (`dismiss_seconds`) after it, so at INSTANT uuldana dismissed it and left the agent running (the ⚠ mark)",
        "",
        "The text it read:",
        "",
        "```text",
        "You've hit your weekly limit · resets RESET_TEXT",
        "```",
        "",
        "The lines the agent drew around it: 4 before it, its own line, 20 after it until it was dismissed.",
        "",
        // four backticks in the agent's line: the fence is five long, so the line cannot end the block
        "`````text",
        "> please refactor the parser",
        "I refactored the parser into three functions.",
        "using the key [redacted] for the tests",
        "the README quotes it as ```` inside a fence",
        "⎿  You've hit your weekly limit · resets RESET_TEXT",
        ...steps,
        "`````",
        "",
      ].join("\n"),
    );
    // the score the report gives is the journal's
    expect(events.find((event) => event.type === "candidate")?.score).toBe(8);
    expect(events.find((event) => event.type === "ignored")).toMatchObject({ entry: "limit", text: LIMIT_RESET.message, candidate: 1, lines_after: steps });

    // again, with the last lines the run drew: the same file, replaced
    const again = await sandbox.run(["report", id, "--last", "3"]);
    expect(again).toEqual({ code: 0, stdout: `${file}\n`, stderr: "" });
    const withLast = readFileSync(file, "utf8");
    expect(mask(withLast).split("\n").slice(0, 7)).toEqual(mask(report).split("\n").slice(0, 6).concat("- with the last 3 lines each run drew"));
    expect(withLast.slice(withLast.indexOf("`````\n") + 6)).toBe(
      ["", "The last 3 lines the agent drew (of the 66 uuldana kept):", "", "```text", "step 59 of 60: edited file59.ts", "step 60 of 60: edited file60.ts", "all 60 steps done", "```", ""].join("\n"),
    );
    // the tail the session kept, and everything written about the session, without the entry's key
    const drawn = readFileSync(join(folder, "drawn-1.txt"), "utf8");
    expect(statSync(join(folder, "drawn-1.txt")).mode & 0o777).toBe(0o600);
    expect(drawn.split("\n").slice(0, 5)).toEqual(["> please refactor the parser", "I refactored the parser into three functions.", "using the key [redacted] for the tests", "the README quotes it as ```` inside a fence", `⎿  You've hit your weekly limit · resets ${LIMIT_RESET.text}`]);
    expect(terminal.raw).toContain(KEY);
    for (const name of readdirSync(folder)) expect(readFileSync(join(folder, name), "utf8"), name).not.toContain(KEY);
    expect(withLast).toContain("[redacted]");
  });

  it("writes a real stop: the rest, the stop and the entry the session went on with", async () => {
    sandbox.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, quiet_seconds: 0.3, dismiss_seconds: 5 });
    const terminal = open(["run"], { LIMIT_MODE: "answer" });
    await terminal.waitFor("limit agent ready");
    terminal.type("please add a test for the lexer\r");
    await terminal.waitFor("line agent ready", 20_000);
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    const { folder, events } = theSession();
    const run = await sandbox.run(["report"]);
    expect(run).toEqual({ code: 0, stdout: `${join(folder, "report.md")}\n`, stderr: "" });
    expect(mask(readFileSync(join(folder, "report.md"), "utf8"))).toBe(
      [
        "# uuldana report: session `SESSION`",
        "",
        "- uuldana 0.1.0, report written INSTANT",
        "- session started INSTANT under uuldana 0.1.0; ended (exit 0)",
        "- runs: `limit` → `line`",
        "- candidates: 1 (1 stop)",
        "",
        PREFACE,
        "",
        "## Run 1: `limit`",
        "",
        "- agent: Stand-in limit 1.0.0; provider `limit`, entry `limit`, at `ask`",
        "- started INSTANT; stopped with its exit keys, exit 0",
        "",
        "### Candidate 1: a stop",
        "",
        "- seen INSTANT",
        "- verdict: stop (score 8); kind `weekly`; reset RESET (times read in Europe/Berlin)",
        "- reasons:",
        reasons(events),
        "- what happened: the agent was quiet for 0.3 s (`quiet_seconds`) after it, so at INSTANT uuldana rested `limit` until RESET, stopped it and went on with `line` (run 2)",
        "",
        "The text it read:",
        "",
        "```text",
        "You've hit your weekly limit · resets RESET_TEXT",
        "```",
        "",
        "The lines the agent drew around it: 5 before it, its own line, 0 after it until it was stopped.",
        "",
        "```text",
        "limit agent ready",
        "> please add a test for the lexer",
        "╭──────────────────────────────────────────────╮",
        "│ I answered: please add a test for the lexer  │",
        "╰──────────────────────────────────────────────╯",
        "⎿  You've hit your weekly limit · resets RESET_TEXT",
        "```",
        "",
        "## Run 2: `line`",
        "",
        "- agent: Stand-in line 1.0.0; provider `line`, entry `line`, at `ask`",
        "- started INSTANT; ended, exit 0",
        "",
        "No text in this run looked like a usage limit to the reader.",
        "",
      ].join("\n"),
    );
    // the journal's existing lines keep their fields; the candidate and the outcome name each other
    expect(events.map((event) => event.type).filter((type) => ["candidate", "limit", "cooldown"].includes(type))).toEqual(["candidate", "limit", "cooldown"]);
    expect(events.find((event) => event.type === "limit")).toMatchObject({ entry: "limit", source: "inferred", text: LIMIT_RESET.message, kind: "weekly", reset_at: LIMIT_RESET.iso, after: "quiet", candidate: 1, lines_after: [] });
  });

  it("says when the reader saw nothing, and gives the last lines with --last", async () => {
    sandbox.write("config/config.json", { providers: ["line"], auto_detect: false });
    const terminal = open(["run"]);
    await terminal.waitFor("line agent ready");
    terminal.type("hello there\r");
    await terminal.waitFor("you said: hello there");
    terminal.type("/exit\r");
    await terminal.exited;
    const { folder } = theSession();
    expect((await sandbox.run(["report", "--last", "3"])).stdout).toBe(`${join(folder, "report.md")}\n`);
    const report = mask(readFileSync(join(folder, "report.md"), "utf8")).split("\n");
    expect(report.slice(4, 7)).toEqual(["- runs: `line`", "- candidates: none", "- with the last 3 lines each run drew"]);
    expect(report.slice(9)).toEqual([
      "",
      "The reader took no text in this session for a usage limit. If an agent did say its allowance was gone, its words are among the last lines below; a provider's manifest can name such wording in `limit_phrases`.",
      "",
      "## Run 1: `line`",
      "",
      "- agent: Stand-in line 1.0.0; provider `line`, entry `line`, at `ask`",
      "- started INSTANT; ended, exit 0",
      "",
      "No text in this run looked like a usage limit to the reader.",
      "",
      // the terminal's echo of what was typed is drawn too
      "The last 3 lines the agent drew (of the 5 uuldana kept):",
      "",
      "```text",
      "you said: hello there",
      "/exit",
      "bye",
      "```",
      "",
    ]);
  });

  it("refuses an unknown session, a --last that is no number of lines, and a data folder without sessions", async () => {
    expect(await sandbox.run(["report"])).toEqual({
      code: 2,
      stdout: "",
      stderr: 'uuldana: there is no session to report on yet [E_NO_SESSION]\nhint: a session begins with "uuldana run"; "uuldana sessions" lists them\n',
    });
    expect(await sandbox.run(["report", "nosuch"])).toEqual({
      code: 2,
      stdout: "",
      stderr: 'uuldana: no session "nosuch" [E_USAGE]\nhint: run "uuldana sessions" to see the sessions\n',
    });
    for (const value of ["0", "-3", "ten", "2.5"]) {
      expect(await sandbox.run(["report", "--last", value])).toEqual({
        code: 2,
        stdout: "",
        stderr: `uuldana: --last ${value}: not a number of lines [E_USAGE]\nhint: give a whole number of lines above 0, for example --last 50\n`,
      });
    }
  });
});

describe("the lines kept of a run", () => {
  const redactor = new Redactor([], [KEY]);
  const redactLines = (lines: readonly string[]): string[] => redactor.redactLines(lines);

  it("blank a secret the screen wrapped across the edge of a window", () => {
    const drawn = new DrawnLines(redactLines);
    // the key's first half is the line just before the window's 20 lines
    drawn.add([`export KEY=${KEY.slice(0, 10)}`, `${KEY.slice(10)} set`, ...Array.from({ length: WINDOW_LINES - 1 }, (_, i) => `line ${i}`)]);
    drawn.add(["You've hit your weekly limit"]);
    const seen = drawn.candidate("You've hit your weekly limit", 1);
    expect(seen.before[0]).toBe("[redacted] set");
    expect(seen.before).toHaveLength(WINDOW_LINES);
    expect(seen.lines).toEqual(["You've hit your weekly limit"]);
    drawn.add([`next ${KEY.slice(0, 12)}`, `${KEY.slice(12)}`, ...Array.from({ length: 30 }, (_, i) => `after ${i}`)]);
    const after = drawn.outcome().after;
    expect(after.slice(0, 3)).toEqual(["next [redacted]", "[redacted]", "after 0"]);
    expect(after).toHaveLength(WINDOW_LINES);
    expect(drawn.tail().join("\n")).not.toContain(KEY.slice(10));
  });

  it("find the candidate's own lines in a batch of many, by their letters and digits", () => {
    const drawn = new DrawnLines();
    drawn.add(["before", "│ ⚠  Usage limit reached for", "│    all models · resets 5pm", "│ press a key", "after"]);
    expect(drawn.candidate("Usage limit reached for\nall models · resets 5pm", 5)).toEqual({ before: ["before"], lines: ["│ ⚠  Usage limit reached for", "│    all models · resets 5pm"], after: [] });
    expect(drawn.outcome().after).toEqual(["│ press a key", "after"]);
  });

  it("keep at most 500 lines and 256 KB, each line at most 1,000 characters", () => {
    const drawn = new DrawnLines();
    drawn.add(Array.from({ length: 2000 }, (_, i) => `line ${i}`));
    const tail = drawn.tail();
    expect(tail).toHaveLength(TAIL_LINES);
    expect(tail.at(-1)).toBe("line 1999");
    drawn.add(["x".repeat(5000)]);
    expect(drawn.tail().at(-1)).toBe("x".repeat(LINE_CHARS) + "…");
    const wide = new DrawnLines();
    wide.add(Array.from({ length: 400 }, () => "é".repeat(900)));
    const kept = wide.tail();
    expect(kept.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0)).toBeLessThanOrEqual(TAIL_BYTES);
    expect(kept.length).toBe(Math.floor(TAIL_BYTES / 1801));
  });
});

describe("Markdown of agents' text", () => {
  it("fences a block with more backticks than any run inside, and quotes values with control characters escaped", () => {
    expect(fenced(["plain"])).toBe("```text\nplain\n```");
    expect(fenced(["a ````` run", "\x1b[31mred"])).toBe("``````text\na ````` run\n\\u001b[31mred\n``````");
    expect(code("a`b")).toBe("``a`b``");
    expect(code("`x")).toBe("`` `x ``");
  });
});
