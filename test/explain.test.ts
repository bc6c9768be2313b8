import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import { bin, makeSandbox, root } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

const sandbox = makeSandbox();
afterAll(() => sandbox.cleanup());
const env = { TZ: "Europe/Berlin" };
const NOW = "--now=2026-11-30T12:00:00Z";

describe("uuldana explain", () => {
  it("says stop, when the weekly limit returns and why, as JSON", async () => {
    const run = await sandbox.run(["explain", NOW, "--json", "You've hit your weekly limit · resets Oct 9, 10am (America/New_York)"], { env });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      stop: true,
      score: 8,
      kind: "weekly",
      reset_at: "2027-10-09T14:01:00.000Z",
      reasons: [
        '"hit your weekly limit" is about an allowance running out',
        'says when it returns ("Oct 9, 10am (America/New_York)")',
        "is addressed to the user",
        "is a short message",
        "names the limit (weekly)",
      ],
      span: { line: 0, text: "You've hit your weekly limit · resets Oct 9, 10am (America/New_York)" },
      // the facts besides the words: here only the zone a time printed without one would have been read in
      facts: { time_zone: "Europe/Berlin" },
    });
  });

  it("orders a numeric date's day and month by the user's locale, and reads none where no locale decides", async () => {
    const text = "You've hit your usage limit. Try again at 11/12/2027, 9:00.";
    const resetAt = async (locale: Record<string, string>): Promise<string | null> =>
      JSON.parse((await sandbox.run(["explain", NOW, "--json", text], { env: { ...env, ...locale } })).stdout).reset_at;
    expect(await resetAt({ LC_ALL: "en_US.UTF-8", LANG: "de_DE.UTF-8" })).toBe("2027-11-12T08:01:00.000Z");
    expect(await resetAt({ LC_TIME: "de_DE.UTF-8", LANG: "en_US.UTF-8" })).toBe("2027-12-11T08:01:00.000Z");
    expect(await resetAt({ LANG: "en_GB.UTF-8" })).toBe("2027-12-11T08:01:00.000Z");
    expect(await resetAt({ LC_ALL: "C" })).toBeNull();
  });

  it("names the limit hit, not the credits offered as a remedy", async () => {
    const kind = async (text: string): Promise<string> => JSON.parse((await sandbox.run(["explain", NOW, "--json", text], { env })).stdout).kind;
    expect(await kind("■ You’ve hit your usage limit. Upgrade to Pro, visit the usage page to purchase more credits or try again at 4:05 AM.")).toBe("unknown");
    expect(await kind("You're out of credits. Add credits to continue.")).toBe("credits");
  });

  it("marks a stop whose text offers paid usage paid_offer: true (kind keeps its values); other verdicts carry no such field", async () => {
    const offer = "You've hit your weekly limit · resets Oct 9, 10am (America/New_York)\nRun /usage-credits to raise it and keep using Claude";
    const offered = JSON.parse((await sandbox.run(["explain", NOW, "--json", offer], { env })).stdout);
    expect(offered).toMatchObject({ stop: true, kind: "weekly", paid_offer: true });
    const reset = JSON.parse((await sandbox.run(["explain", NOW, "--json", "You've hit your 5-hour limit · resets 3am (UTC)\n❯ 1. Use an available limit reset and keep working"], { env })).stdout);
    expect(reset).toMatchObject({ stop: true, paid_offer: true });
    const plain = JSON.parse((await sandbox.run(["explain", NOW, "--json", "You've hit your weekly limit · resets Oct 9, 10am (America/New_York)"], { env })).stdout);
    expect(plain).not.toHaveProperty("paid_offer");
    // the administrator is the one asked: nothing the user could take from the agent
    const admin = JSON.parse((await sandbox.run(["explain", NOW, "--json", "⚠ Individual quota reached. Contact your administrator to enable overages. Resets in 167h54m10s"], { env })).stdout);
    expect(admin.stop).toBe(true);
    expect(admin).not.toHaveProperty("paid_offer");
    const lines = (await sandbox.run(["explain", NOW, "--jsonl"], { env, stdin: `${JSON.stringify(offer)}\n"hello"\n` })).stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(lines.map((line) => line.paid_offer)).toEqual([true, undefined]);
    const human = await sandbox.run(["explain", NOW, offer], { env });
    expect(human.stdout).toContain("paid: it offers paid usage (credits, a banked reset); uuldana takes it only as paid_usage allows (default never: it fails over)\n");
  });

  it("says no to a warning, with the reason", async () => {
    const run = await sandbox.run(["explain", NOW, "--json", "You've", "used", "85%", "of", "your", "weekly", "limit"], { env });
    const verdict = JSON.parse(run.stdout);
    expect(verdict.stop).toBe(false);
    expect(verdict.reasons).toEqual(['"used 85% of your weekly limit" is about an allowance running out', "not a stop: a share below 100% (85%)"]);
  });

  it("prints a readable verdict, and reads the text from standard input when none is given", async () => {
    const run = await sandbox.run(["explain", NOW], { env, stdin: "Claude usage limit reached. Your limit will reset at 5pm (Europe/London).\n" });
    expect(run.stdout).toBe(
      [
        "stop: yes, a usage limit (score 7)",
        "returns: 2026-11-30 17:01 UTC (in 5 hours)",
        "because:",
        '  - "limit reached" is about an allowance running out',
        '  - says when it returns ("reset at 5pm (Europe/London)")',
        "  - is addressed to the user",
        "  - is a short message",
        "",
      ].join("\n"),
    );
  });

  it.each([
    [[], 'Type or paste the text to explain, then press Ctrl-D on a line of its own (or: uuldana explain "TEXT", uuldana explain < FILE)', "stop: yes, a usage limit (score 7)"],
    [["--jsonl"], 'Type one JSON string a line ("like this"); each gets its verdict when Ctrl-D ends the input (or: uuldana explain --jsonl < FILE)', '{"stop":true,'],
  ])("on a terminal, with %j and no text, says how to give it text, then reads what is typed", async (args, said, verdict) => {
    const terminal = new TestTerminal(process.execPath, [bin, "explain", ...args, NOW], { cwd: sandbox.project, env: { ...sandbox.env, ...env }, cols: 200 });
    try {
      const screen = await terminal.waitFor("Ctrl-D");
      expect(screen[0]).toBe(said);
      const text = "Claude usage limit reached. Your limit will reset at 5pm (Europe/London).";
      terminal.type(`${args.length ? JSON.stringify(text) : text}\r`);
      terminal.type("\x04");
      expect((await terminal.exited).exitCode).toBe(0);
      expect((await terminal.waitFor(verdict)).join("\n")).toContain(verdict);
    } finally {
      terminal.kill();
    }
  });

  it("answers a few hundred lines in one process with --jsonl, one verdict a line, errors in place", async () => {
    const corpus = readFileSync(join(root, "test", "corpus", "stop.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line).text as string);
    // (a near miss told from a notice only by who speaks in a run is no near miss to a text alone)
    const nearMisses = readFileSync(join(root, "test", "corpus", "not-stop.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line)).filter((line) => !line.speaker).map((line) => line.text as string);
    const input = [...corpus.map((text) => JSON.stringify(text)), "not json", "42", ...nearMisses.map((text) => JSON.stringify(text))];
    const run = await sandbox.run(["explain", NOW, "--jsonl"], { env, stdin: input.join("\n") + "\n" });
    const lines = run.stdout.trim().split("\n").map((line) => JSON.parse(line));
    expect(lines).toHaveLength(input.length);
    expect(lines.slice(0, corpus.length).every((v) => v.stop === true)).toBe(true);
    expect(lines[corpus.length]).toEqual({ error: "not JSON: each input line must be one JSON string" });
    expect(lines[corpus.length + 1]).toEqual({ error: "not a JSON string: each input line must be one JSON string" });
    expect(lines.slice(corpus.length + 2).every((v) => v.stop === false)).toBe(true);
    expect(run.code).toBe(0);
  });

  it("uses a provider's own limit phrases with --provider", async () => {
    sandbox.write("config/providers/wordy.json", {
      id: "wordy",
      name: "Wordy",
      executables: ["wordy"],
      version: { args: ["--version"], pattern: "(\\S+)" },
      limit_phrases: ["the well has run dry", "/tokens? jar (?:is )?empty/i"],
    });
    const plain = await sandbox.run(["explain", NOW, "--json", "The well has run dry. Come back tomorrow."], { env });
    expect(JSON.parse(plain.stdout).stop).toBe(false);
    const run = await sandbox.run(["explain", NOW, "--json", "--provider", "wordy", "The well has run dry. Come back tomorrow."], { env });
    expect(JSON.parse(run.stdout)).toMatchObject({ stop: true, reasons: ['the provider\'s limit phrase matches ("The well has run dry")', "is a short message"] });
  });

  it("reads a limit that names a model the built-in agents offer, or --provider's manifest names, as that model's", async () => {
    const kind = async (text: string, ...more: string[]): Promise<string> => JSON.parse((await sandbox.run(["explain", NOW, "--json", ...more, text], { env })).stdout).kind;
    expect(await kind("You've hit your Opus limit · resets Oct 9, 10am (America/New_York)")).toBe("per-model");
    expect(await kind("Usage limit reached for gemini-2.5-pro.")).toBe("per-model");
    // reading manifests imports no adapter: this one would leave a file behind
    const imported = join(sandbox.dir, "adapter-imported");
    sandbox.write("config/providers/quill.mjs", `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(imported)}, "");\nexport default {};\n`);
    sandbox.write("config/providers/quill.json", {
      id: "quill",
      name: "Quill",
      executables: ["quill"],
      version: { args: ["--version"], pattern: "(\\S+)" },
      models: { names: ["nib"] },
      adapter: "./quill.mjs",
    });
    expect(await kind("You've hit your Nib limit · resets Oct 9, 10am (America/New_York)")).toBe("unknown");
    expect(await kind("You've hit your Nib limit · resets Oct 9, 10am (America/New_York)", "--provider", "quill")).toBe("per-model");
    expect(existsSync(imported)).toBe(false);
  });

  it("exits 2 for a --now that is not a date", async () => {
    expect(await sandbox.run(["explain", "--now", "yesterday", "x"], { env })).toEqual({
      code: 2,
      stdout: "",
      stderr: "uuldana: --now yesterday: not a date and time [E_USAGE]\nhint: give an ISO 8601 instant, for example 2026-11-30T12:00:00Z\n",
    });
  });

  it.each([
    [
      "--json",
      ["x"],
      [
        "{",
        '  "error": {',
        '    "code": "E_USAGE",',
        '    "message": "--now yesterday: not a date and time",',
        '    "details": [],',
        '    "hint": "give an ISO 8601 instant, for example 2026-11-30T12:00:00Z",',
        '    "cause": []',
        "  }",
        "}",
        "",
      ].join("\n"),
    ],
    ["--jsonl", [], '{"error":{"code":"E_USAGE","message":"--now yesterday: not a date and time","details":[],"hint":"give an ISO 8601 instant, for example 2026-11-30T12:00:00Z","cause":[]}}\n'],
  ])("with %s, a failure is also one JSON error object on stdout, shaped like the command's own output", async (flag, words, stdout) => {
    expect(await sandbox.run(["explain", flag, "--now", "yesterday", ...words], { env, stdin: '"some text"\n' })).toEqual({
      code: 2,
      stdout,
      stderr: "uuldana: --now yesterday: not a date and time [E_USAGE]\nhint: give an ISO 8601 instant, for example 2026-11-30T12:00:00Z\n",
    });
  });
});
