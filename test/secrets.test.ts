import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { Redactor, redactorFor } from "../core/config/redaction.js";
import { EXIT, installAgents } from "./agents.js";
import { bin, LIMIT_RESET, linkAgent, makeSandbox, readTree, standInManifest, waitFor, handoffPreamble, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

describe("the redactor", () => {
  const redactor = new Redactor([/sk-live-[A-Za-z0-9]{8,}/g], ["acct-7c1d2e3f9a8b", "p@ss.w*rd(1)", "on", "abc"]);

  it.each([
    ["a literal value and a pattern's match", "use acct-7c1d2e3f9a8b and sk-live-abcdefgh12 now", "use [redacted] and [redacted] now"],
    ["a value with regular-expression characters, taken literally", "password p@ss.w*rd(1) or p@ssxw*rd(1)", "password [redacted] or p@ssxw*rd(1)"],
    ["a value the terminal wrapped", "token acct-7c1d\n2e3f9a8b here", "token [redacted] here"],
    ["a value an agent wrapped at its width, indented", "the token acct-7c1d2e\n    3f9a8b is set", "the token [redacted] is set"],
    ["a value wrapped inside a panel", "│ key acct-7c1d2e │\n│ 3f9a8b done     │", "│ key [redacted] done     │"],
    ["a pattern's match that goes on after a wrap", "reads sk-live-4f9a8b7c\n  6d5e4f3a2b1c from its settings", "reads [redacted] from its settings"],
    ["nothing across a blank line: a paragraph ends there", "acct-7c1d\n\n2e3f9a8b", "acct-7c1d\n\n2e3f9a8b"],
    ["nothing across a line of blanks", "acct-7c1d\n   \n2e3f9a8b", "acct-7c1d\n   \n2e3f9a8b"],
    ["values shorter than 4 characters: switches, not secrets", "turn it on, abc", "turn it on, abc"],
    ["each line's own secrets, the line structure kept", "one acct-7c1d2e3f9a8b\ntwo sk-live-abcdefgh12\nthree", "one [redacted]\ntwo [redacted]\nthree"],
    ["a pattern's match at a line's end, not the next line's first word", "export KEY=sk-live-abcdefgh12\nnpm test\nsk-live-abcdefgh12\n  README updated", "export KEY=[redacted]\nnpm test\n[redacted]\n  README updated"],
    ["a literal value wrapped so that its rest looks like a word", "token acct-7c1d2e3f\n9a8b here, acct-\n7c1d2e3f9a8b there", "token [redacted] here, [redacted] there"],
  ])("blanks %s", (_, text, redacted) => {
    expect(redactor.redact(text)).toBe(redacted);
  });

  it("is built from the config's redact patterns and every entry's env values", () => {
    const config = { redact: [/ghp_[A-Za-z0-9]{6,}/g], entries: [{ env: { CLAUDE_CONFIG_DIR: "/home/u/.claude-work", DEBUG: "1" } }, { env: { OPENAI_API_KEY: "sk-proj-xyz123" } }] };
    expect(redactorFor(config).redact("dir /home/u/.claude-work key sk-proj-xyz123 gh ghp_abcdef1 debug 1")).toBe("dir [redacted] key [redacted] gh [redacted] debug 1");
  });

  it("gives a text back unchanged when there is nothing to blank", () => {
    expect(new Redactor().redact("acct-7c1d2e3f9a8b")).toBe("acct-7c1d2e3f9a8b");
  });
});

describe("secrets in a failover", () => {
  let sandbox: Sandbox;
  const terminals: TestTerminal[] = [];
  const TOKEN = "acct-7c1d2e3f";
  const LEAKS = [TOKEN, "sk-live-4f9a8b7c", "6d5e4f3a2b1c"];
  const PREAMBLE = handoffPreamble("Stand-in plan (plan)", "use [redacted] for the deploy");
  const TRANSCRIPT = [
    "--- Stand-in plan (plan), as its screen showed it ---",
    "plan agent ready",
    "(the user's last request, quoted at the top)",
    "The deploy script reads the key [redacted] from its settings; I left it there.",
  ].join("\n");

  beforeEach(() => {
    sandbox = makeSandbox();
    installAgents(sandbox, ["line"]);
    linkAgent(sandbox, "plan", "plan-agent.mjs");
    sandbox.write("config/providers/plan.json", standInManifest("plan", { exit: EXIT }));
    sandbox.write("config/providers/typed.json", standInManifest("typed", { prompt: { mode: "typed", ready: "ready>$" }, exit: EXIT }));
  });
  afterEach(() => {
    for (const terminal of terminals.splice(0)) terminal.kill();
    sandbox.cleanup();
  });

  function start(next: string): TestTerminal {
    sandbox.write("config/config.json", {
      providers: [{ id: "plan", env: { ACCOUNT_TOKEN: TOKEN } }, next],
      auto_detect: false,
      quiet_seconds: 0.3,
      redact: ["sk-live-[A-Za-z0-9]{8,}"],
    });
    const terminal = new TestTerminal(process.execPath, [bin, "run"], {
      cwd: sandbox.project,
      env: { ...sandbox.env, TZ: "Europe/Berlin", PLAN_MODE: "secret", PID_FILE: join(sandbox.dir, "pids") },
      cols: 220,
    });
    terminals.push(terminal);
    return terminal;
  }

  // Every file in the data dir, by its path there.
  const dataFiles = (): Map<string, string> => readTree(sandbox.data);

  it("never reach the next agent's argv, any file of the data dir or the cooldown list: [redacted] stands in their place", async () => {
    const terminal = start("line");
    await terminal.waitFor("plan agent ready");
    terminal.type(`use ${TOKEN} for the deploy\r`);
    await terminal.waitFor("line agent ready", 20_000);
    // what every local user can read while the next agent runs
    const pid = readFileSync(join(sandbox.dir, "pids"), "utf8").trim().split(" ")[1]!;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    expect(cmdline.at(-2)).toBe(`${PREAMBLE}\n\n${TRANSCRIPT}\n`);
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);

    const files = dataFiles();
    const session = readdirSync(join(sandbox.data, "sessions"))[0]!;
    expect([...files.keys()].sort()).toEqual(
      ["cooldowns.json", ...["conversation-1.txt", "conversation-2.txt", "drawn-1.txt", "drawn-2.txt", "journal.jsonl", "prompt-1.txt", "transcript-1.txt"].map((file) => `sessions/${session}/${file}`)].sort(),
    );
    for (const [file, text] of files) for (const leak of LEAKS) expect(text.includes(leak), `${leak} in ${file}`).toBe(false);
    expect(files.get(`sessions/${session}/prompt-1.txt`)).toBe(`${PREAMBLE}\n\n${TRANSCRIPT}\n`);
    expect(files.get(`sessions/${session}/transcript-1.txt`)).toBe(`${TRANSCRIPT}\n`);
    expect(files.get(`sessions/${session}/conversation-1.txt`)).toContain("The deploy script reads the key [redacted] from its settings; I left it there.");
    // the rows the run drew, kept for uuldana report: the key the screen wrapped is blanked on each row it stands on
    expect(files.get(`sessions/${session}/drawn-1.txt`)).toContain("The deploy script reads the key [redacted]\n[redacted] from its settings; I left it there.\n");
    const limitText = `You've hit your weekly limit (account [redacted]) · resets ${LIMIT_RESET.text}`;
    expect(JSON.parse(files.get("cooldowns.json")!).entries.plan.text).toBe(limitText);
    const journal = files.get(`sessions/${session}/journal.jsonl`)!.trim().split("\n").map((line) => JSON.parse(line));
    expect(journal.find((event) => event.type === "user")?.text).toBe("use [redacted] for the deploy");
    expect(journal.find((event) => event.type === "limit")?.text).toBe(limitText);

    const list = await sandbox.run(["cooldowns", "list"]);
    // the list shows a text's first 60 characters
    const quoted = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    expect(list.stdout.split("\n")[1]).toMatch(new RegExp(`^plan {3}${LIMIT_RESET.shown} {2}.+ {2}inferred {2}weekly {2}${quoted(limitText.slice(0, 60))}$`));
  });

  it("never reach a prompt typed into the next agent", async () => {
    const terminal = start("typed");
    await terminal.waitFor("plan agent ready");
    terminal.type(`use ${TOKEN} for the deploy\r`);
    await terminal.waitFor("received (pasted): ", 20_000);
    await waitFor(() => terminal.raw.includes("I left it there."), "the typed prompt's end", 10_000);
    const typed = terminal.raw.slice(terminal.raw.indexOf("received (pasted): "));
    expect(typed).toContain("The deploy script reads the key [redacted] from its settings; I left it there.");
    for (const leak of LEAKS) expect(typed).not.toContain(leak);
    terminal.type("/exit\r");
    await terminal.exited;
  });

  it("are blanked by cooldowns list in a row an older uuldana wrote unredacted", async () => {
    sandbox.write("config/config.json", { providers: [{ id: "plan", env: { ACCOUNT_TOKEN: TOKEN } }], auto_detect: false, redact: ["sk-live-[A-Za-z0-9]{8,}"] });
    const until = new Date(Date.now() + 90 * 60_000).toISOString();
    sandbox.write("data/cooldowns.json", { version: 1, entries: { plan: { until, since: null, source: "inferred", kind: "weekly", text: `limit hit for ${TOKEN} with sk-live-abcdefgh12` } } });
    const list = await sandbox.run(["cooldowns", "list"]);
    expect(list.stdout.split("\n")[1]).toMatch(/ {2}limit hit for \[redacted\] with \[redacted\]$/);
    const json = JSON.parse((await sandbox.run(["cooldowns", "list", "--json"])).stdout) as { text: string }[];
    expect(json[0]!.text).toBe("limit hit for [redacted] with [redacted]");
  });
});
