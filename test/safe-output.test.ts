import { readFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { jsonText } from "../core/base/json.js";
import { escapeControls, safeFileText, safeOutput } from "../core/base/safe-text.js";
import { readCooldowns, recordRests } from "../core/session/cooldowns.js";
import { Journal, saveSessionFile } from "../core/session/journal.js";
import { savePending } from "../core/session/pending-rests.js";
import { EXIT } from "./agents.js";
import { bin, linkAgent, makeSandbox, standInManifest, waitFor, type Run, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// Any control character but a line break: what must never reach the user's terminal from uuldana's own lines.
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

// Values a cloned repository, a manifest, an agent or a damaged journal might hold.
const CLIPBOARD = "evil\x1b]52;c;ZXZpbA==\x07";
const CLEAR = "wipe\x1b[2J";
const TITLE = "title\x1b]0;pwned\x07";
const C1 = "c1\u009b31m";

let sandbox: Sandbox;
beforeEach(() => {
  sandbox = makeSandbox();
});
afterEach(() => sandbox.cleanup());

function expectSafe(run: Run): void {
  expect(run.stdout).not.toMatch(CONTROL);
  expect(run.stderr).not.toMatch(CONTROL);
}

describe("safe text", () => {
  it.each([
    ["ESC and BEL of an OSC 52 clipboard write", CLIPBOARD, "evil\\u001b]52;c;ZXZpbA==\\u0007"],
    ["a CSI that clears the screen", CLEAR, "wipe\\u001b[2J"],
    ["a C1 CSI", C1, "c1\\u009b31m"],
    ["backspaces, DEL and NUL", "1.0\b\b\x7f\x00", "1.0\\b\\b\\u007f\\u0000"],
    ["line breaks, tabs and carriage returns", "a\nb\tc\rd", "a\\nb\\tc\\rd"],
    ["nothing in plain or wide text", "Claude Code · 日本語 ✓", "Claude Code · 日本語 ✓"],
  ])("escapes %s the way a JSON string writes them", (_, text, shown) => {
    expect(escapeControls(text)).toBe(shown);
  });

  it("keeps uuldana's own line breaks at the printing boundary, and changes nothing already made safe", () => {
    expect(safeOutput(`one ${CLEAR}\ntwo ${C1}\n`)).toBe("one wipe\\u001b[2J\ntwo c1\\u009b31m\n");
    expect(safeOutput(escapeControls(CLIPBOARD))).toBe(escapeControls(CLIPBOARD));
  });
});

describe("files uuldana writes", () => {
  // every control character of C0, DEL and C1, and text around them
  const ALL = `a${Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(code)).join("")}\x7f${Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(0x80 + code)).join("")}z`;
  // a raw control character in a file, but a line break and a tab
  const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

  it("hold JSON with every control as an escape, which reads back as the same string", () => {
    const text = jsonText({ text: ALL, [C1]: [CLIPBOARD, "\u0085"] }, 2);
    expect(text).not.toMatch(RAW);
    expect(JSON.parse(text)).toEqual({ text: ALL, [C1]: [CLIPBOARD, "\u0085"] });
    expect(jsonText("\u009b\u0085\u007f\u001b")).toBe(String.raw`"\u009b\u0085\u007f\u001b"`);
  });

  it("hold text with its line breaks and tabs, every other control escaped the way uuldana prints one", () => {
    expect(safeFileText(`one\ttwo ${C1}\u0085\u007f ${CLEAR}\r\n`)).toBe("one\ttwo c1\\u009b31m\\u0085\\u007f wipe\\u001b[2J\\r\n");
  });

  it("the cooldown table and a rest saved beside it hold none raw, and read back the rest's text", async () => {
    const rest = { until: new Date("2999-01-01T00:00:00Z"), since: new Date(), source: "inferred" as const, kind: "weekly", text: ALL };
    await recordRests(sandbox.data, new Map([["codex", rest]]));
    const saved = await savePending(sandbox.data, new Map([["gemini", rest]]), new Date());
    expect(RAW.test(readFileSync(join(sandbox.data, "cooldowns.json"), "utf8"))).toBe(false);
    expect(RAW.test(readFileSync(saved, "utf8"))).toBe(false);
    expect([...(await readCooldowns(sandbox.data)).entries].map(([key, row]) => [key, row.text])).toEqual([["codex", ALL], ["gemini", ALL]]);
  });

  it("a session's journal, its JSON files and its text files (report.md, drawn-N.txt) hold none raw", () => {
    const journal = new Journal(sandbox.data, "controls");
    journal.write("limit", { text: ALL });
    journal.save("turns-1.json", JSON.stringify([{ role: "agent", text: ALL }]) + "\n");
    journal.save("drawn-1.txt", `${ALL}\n\tindented\n`);
    saveSessionFile(journal.folder, "report.md", `# Report\n\n${ALL}\n`);
    journal.close();
    const read = (name: string): string => readFileSync(join(journal.folder, name), "utf8");
    for (const name of ["journal.jsonl", "turns-1.json", "drawn-1.txt", "report.md"]) expect([name, RAW.test(read(name))]).toEqual([name, false]);
    expect(JSON.parse(read("journal.jsonl").split("\n")[0]!).text).toBe(ALL);
    expect(JSON.parse(read("turns-1.json"))).toEqual([{ role: "agent", text: ALL }]);
    expect(read("drawn-1.txt")).toBe(`${escapeControls(ALL).replace("\\t", "\t").replace("\\n", "\n")}\n\tindented\n`);
  });
});

describe("a cloned repository's project config naming hostile provider ids", () => {
  beforeEach(() => {
    sandbox.write("project/.uuldanarc.json", { providers: [CLIPBOARD, CLEAR, TITLE, C1] });
  });

  it("providers list shows them escaped in its table and in unknown provider \"…\"", async () => {
    sandbox.write("config/config.json", { auto_detect: true });
    const list = await sandbox.run(["providers", "list"]);
    expectSafe(list);
    expect(list.stdout).toBe(
      [
        "#  ENTRY                           PROVIDER                        SOURCE  VERIFIED  VERSION  SIGNED IN  LEVEL  PROMPT  RESTING UNTIL  STATUS",
        '1  evil\\u001b]52;c;ZXZpbA==\\u0007  evil\\u001b]52;c;ZXZpbA==\\u0007  -       -         -        -          -      none    -              unknown provider "evil\\u001b]52;c;ZXZpbA==\\u0007": no valid manifest has this id',
        '2  wipe\\u001b[2J                   wipe\\u001b[2J                   -       -         -        -          -      none    -              unknown provider "wipe\\u001b[2J": no valid manifest has this id',
        '3  title\\u001b]0;pwned\\u0007       title\\u001b]0;pwned\\u0007       -       -         -        -          -      none    -              unknown provider "title\\u001b]0;pwned\\u0007": no valid manifest has this id',
        '4  c1\\u009b31m                     c1\\u009b31m                     -       -         -        -          -      none    -              unknown provider "c1\\u009b31m": no valid manifest has this id',
        "",
        "Ceiling ask: no entry can run now.",
        "",
      ].join("\n"),
    );
  });

  it("providers list --json stays valid JSON that reads back the ids as they are", async () => {
    sandbox.write("config/config.json", { auto_detect: true });
    const list = await sandbox.run(["providers", "list", "--json"]);
    expectSafe(list);
    expect((JSON.parse(list.stdout) as { entry: string }[]).map((row) => row.entry)).toEqual([CLIPBOARD, CLEAR, TITLE, C1]);
  });

  it("the notes of providers list and run show them escaped", async () => {
    sandbox.write("config/config.json", { auto_detect: false });
    const file = join(sandbox.project, ".uuldanarc.json");
    const notes = [
      `${file}: providers[0] names "evil\\u001b]52;c;ZXZpbA==\\u0007", which is not in your providers list and auto_detect is off; ignored`,
      `${file}: providers[1] names "wipe\\u001b[2J", which is not in your providers list and auto_detect is off; ignored`,
      `${file}: providers[2] names "title\\u001b]0;pwned\\u0007", which is not in your providers list and auto_detect is off; ignored`,
      `${file}: providers[3] names "c1\\u009b31m", which is not in your providers list and auto_detect is off; ignored`,
    ];
    const list = await sandbox.run(["providers", "list"]);
    expectSafe(list);
    expect(list.stderr).toBe([...notes, ""].join("\n"));
    const run = await sandbox.run(["run"]);
    expectSafe(run);
    expect(run.stderr).toBe([...notes, "uuldana: no entry can run: no provider is listed in config.json and none is installed [E_NO_ELIGIBLE_ENTRY]", 'hint: install an agent CLI, or list one in config.json; "uuldana providers list --all" shows every known provider', ""].join("\n"));
    expect(run.code).toBe(1);
  });

  it("run's lines on why no entry can run show them escaped", async () => {
    sandbox.write("config/config.json", { auto_detect: true });
    const run = await sandbox.run(["run"]);
    expectSafe(run);
    expect(run.stderr).toBe(
      [
        "uuldana: no entry can run under the ceiling ask [E_NO_ELIGIBLE_ENTRY]",
        '  evil\\u001b]52;c;ZXZpbA==\\u0007: unknown provider "evil\\u001b]52;c;ZXZpbA==\\u0007": no valid manifest has this id',
        '  wipe\\u001b[2J: unknown provider "wipe\\u001b[2J": no valid manifest has this id',
        '  title\\u001b]0;pwned\\u0007: unknown provider "title\\u001b]0;pwned\\u0007": no valid manifest has this id',
        '  c1\\u009b31m: unknown provider "c1\\u009b31m": no valid manifest has this id',
        "",
      ].join("\n"),
    );
  });
});

describe("uuldana's prompt during a run", () => {
  it("lists a hostile entry key escaped: the terminal's title stays uuldana's", async () => {
    linkAgent(sandbox, "line", "line-agent.mjs");
    sandbox.write("config/providers/line.json", standInManifest("line", { exit: EXIT }));
    sandbox.write("config/config.json", { providers: ["line"], auto_detect: true });
    sandbox.write("project/.uuldanarc.json", { providers: ["line", TITLE] });
    const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: sandbox.env, cols: 160 });
    try {
      await terminal.waitFor("line agent ready");
      terminal.type("\x1d");
      await terminal.waitFor("uuldana>");
      terminal.type("/agent\r");
      const screen = await terminal.waitFor("change it:");
      expect(screen).toContain('  2. title\\u001b]0;pwned\\u0007: unknown provider "title\\u001b]0;pwned\\u0007": no valid manifest has this id');
      expect(terminal.title).toBe("uuldana · line · ask");
      terminal.type("\x1b");
      await waitFor(() => !terminal.screen().join("\n").includes("uuldana>"), "the prompt to close", 10_000);
      terminal.type("/exit\r");
      await terminal.exited;
    } finally {
      terminal.kill();
    }
  });
});

describe("a manifest whose name holds control characters", () => {
  it("is refused by the schema, and the error quotes the name escaped", async () => {
    const file = sandbox.write("config/providers/evil.json", standInManifest("evil", { name: "Evil\x1b[2J\u009b31m" }));
    const error = [
      `uuldana: invalid manifest ${file} (1 problem) [E_MANIFEST_INVALID]`,
      "  at /name (name): does not have the expected form",
      '    value: "Evil\\u001b[2J\\u009b31m"',
      "    allowed: text matching ^[^\\u0000-\\u001f\\u007f-\\u009f]{1,60}$",
      "    hint: The provider's name as people know it (for example \"Claude Code\"): 1 to 60 characters, no control characters (it is printed on the user's terminal and handed to the next agent).",
    ];
    const validate = await sandbox.run(["providers", "validate", file]);
    expectSafe(validate);
    expect(validate).toEqual({ code: 1, stdout: "", stderr: [...error, ""].join("\n") });
    sandbox.write("config/config.json", { auto_detect: false });
    const list = await sandbox.run(["providers", "list"]);
    expectSafe(list);
    expect(list.stderr).toBe([...error, ""].join("\n"));
  });
});

describe("an agent whose --version prints backspaces and C1 controls", () => {
  beforeEach(() => {
    linkAgent(sandbox, "ver", "version-agent.sh");
    sandbox.write("config/providers/ver.json", standInManifest("ver", { version: { args: ["--version"], pattern: "^ver (\\S+)" } }));
    sandbox.write("config/config.json", { providers: ["ver"], auto_detect: false });
  });
  const env = { FAKE_VERSION: "1.0\b\b\b9.9\u009b2J\u0085" };

  it("providers list shows the version escaped, and --json reads it back as printed", async () => {
    const list = await sandbox.run(["providers", "list"], { env });
    expectSafe(list);
    expect(list.stdout.split("\n").slice(0, 2)).toEqual([
      "#  ENTRY  PROVIDER  SOURCE   VERIFIED       VERSION                     SIGNED IN  LEVEL  PROMPT  RESTING UNTIL  STATUS",
      "1  ver    ver       drop-in  documentation  1.0\\b\\b\\b9.9\\u009b2J\\u0085  ?          ask    argv    -              ready",
    ]);
    const json = await sandbox.run(["providers", "list", "--json"], { env });
    expectSafe(json);
    expect((JSON.parse(json.stdout) as { version: string }[])[0]!.version).toBe(env.FAKE_VERSION);
  });

  it("run says it escaped in the line that starts the agent, and passes the agent's own output through untouched", async () => {
    const run = await sandbox.run(["run"], { env });
    expect(run.stderr).not.toMatch(CONTROL);
    expect(run.stderr.split("\n")[0]).toBe("uuldana: starting ver (Stand-in ver 1.0\\b\\b\\b9.9\\u009b2J\\u0085) at ask · ctrl-] opens uuldana's prompt");
    // the agent's screen is its own: byte for byte as its terminal gave it
    expect(run.stdout).toBe("ver: started with --ask\r\n");
  });
});

describe("a journal whose cwd holds control characters", () => {
  const cwd = `/srv/x${TITLE}${CLEAR}\nuuldana: fake line`;
  beforeEach(() => {
    const events = [
      { at: "2026-11-30T12:00:00.000Z", type: "session-start", cwd, ceiling: "ask", order: ["line"], pid: 999_999_999 },
      { at: "2026-11-30T12:00:01.000Z", type: "user", entry: "line", text: `hello ${CLIPBOARD}` },
      { at: "2026-11-30T12:00:02.000Z", type: "session-end", exit_code: 0 },
    ];
    sandbox.write("data/sessions/abc123/journal.jsonl", events.map((event) => JSON.stringify(event)).join("\n") + "\n");
  });
  const shown = "/srv/xtitle\\u001b]0;pwned\\u0007wipe\\u001b[2J\\nuuldana: fake line";

  it("sessions shows it escaped, on its row", async () => {
    const list = await sandbox.run(["sessions"]);
    expectSafe(list);
    expect(list.stdout).toBe(
      [`SESSION  STARTED               FOLDER${" ".repeat(shown.length - 6)}  RUNS  STATE`, `abc123   2026-11-30 12:00 UTC  ${shown}  -     ended`, ""].join("\n"),
    );
    const json = await sandbox.run(["sessions", "--json"]);
    expectSafe(json);
    expect((JSON.parse(json.stdout) as { cwd: string }[])[0]!.cwd).toBe(cwd);
  });

  it("sessions show shows it, and what was typed, escaped", async () => {
    const show = await sandbox.run(["sessions", "show", "abc123"]);
    expectSafe(show);
    expect(show.stdout).toBe(
      [
        `session abc123 · started 2026-11-30 12:00 UTC · ${shown} · ended (exit 0)`,
        "12:00  you (to line): hello evil\\u001b]52;c;ZXZpbA==\\u0007",
        "12:00  session ended, exit 0",
        "",
      ].join("\n"),
    );
  });
});

describe("other texts from files and programs", () => {
  it("cooldowns list shows a row's text escaped", async () => {
    const until = new Date(Date.now() + 90 * 60_000).toISOString();
    sandbox.write("data/cooldowns.json", { version: 1, entries: { line: { until, since: null, source: "inferred", kind: "weekly", text: `limit ${CLEAR}\n${C1}` } } });
    const list = await sandbox.run(["cooldowns", "list"]);
    expectSafe(list);
    expect(list.stdout.split("\n")[1]).toMatch(/ {2}weekly {2}limit wipe\\u001b\[2J c1\\u009b31m$/);
  });

  it("explain quotes the text's phrase escaped", async () => {
    const explain = await sandbox.run(["explain", `You have hit your${C1}weekly limit now`]);
    expectSafe(explain);
    expect(explain.stdout.split("\n")[3]).toBe('  - "hit yourc1\\u009b31mweekly limit" is about an allowance running out');
  });

  it("a config error quotes the bad value escaped", async () => {
    const file = sandbox.write("config/config.json", { ceiling: `ask${CLEAR}${C1}` });
    const list = await sandbox.run(["providers", "list"]);
    expectSafe(list);
    expect(list).toEqual({
      code: 2,
      stdout: "",
      stderr: [
        `uuldana: invalid config ${file} (1 problem) [E_CONFIG_INVALID]`,
        "  at /ceiling (ceiling): is not one of the allowed values",
        '    value: "askwipe\\u001b[2Jc1\\u009b31m"',
        '    allowed: "read-only", "ask", "auto-edit", "full-access"',
        '    hint: The most a session\'s agents may do without asking (default "ask").',
        "",
      ].join("\n"),
    });
  });

  it("a usage error quotes the argument escaped", async () => {
    sandbox.write("config/config.json", { providers: [], auto_detect: false });
    const run = await sandbox.run(["run", "--provider", CLEAR]);
    expectSafe(run);
    expect(run.stderr).toBe(["uuldana: --provider wipe\\u001b[2J: no entry has this key [E_USAGE]", "  entries: none", 'hint: run "uuldana providers list --all" to see every entry and provider', ""].join("\n"));
  });
});
