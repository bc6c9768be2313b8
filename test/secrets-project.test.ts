import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { EXIT, installAgents } from "./agents.js";
import { bin, LIMIT_RESET, linkAgent, makeSandbox, readTree, standInManifest, waitFor, handoffPreamble, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox, ["line"]);
  linkAgent(sandbox, "plan", "plan-agent.mjs");
  sandbox.write("config/providers/plan.json", standInManifest("plan", { exit: EXIT }));
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

const TOKEN = "acct-7c1d2e3f";
const PREAMBLE = handoffPreamble("Stand-in plan (plan)", "use [redacted] for the deploy");

// uuldana run in the project, with the user's keys also exported in their shell, as they often are.
function start(): TestTerminal {
  const terminal = new TestTerminal(process.execPath, [bin, "run"], {
    cwd: sandbox.project,
    env: { ...sandbox.env, TZ: "Europe/Berlin", PLAN_MODE: "secret", ACCOUNT_TOKEN: TOKEN, PID_FILE: join(sandbox.dir, "pids") },
    cols: 220,
  });
  terminals.push(terminal);
  return terminal;
}

// Every file in the data dir, by its path there.
const dataFiles = (): Map<string, string> => readTree(sandbox.data);

function sessionFolder(): string {
  return `sessions/${readdirSync(join(sandbox.data, "sessions"))[0]!}`;
}

function journal(files: Map<string, string>): { type: string; entry?: string; text?: string }[] {
  return files.get(`${sessionFolder()}/journal.jsonl`)!.trim().split("\n").map((line) => JSON.parse(line));
}

describe("secrets of entries a project's config leaves out", () => {
  it("are blanked all the same in the conversation, the journal and the next agent's prompt", async () => {
    const KEY = "sk-live-4f9a8b7c6d5e4f3a2b1c";
    sandbox.write("config/config.json", {
      providers: ["plan", "line", { id: "line", name: "vault", env: { ACCOUNT_TOKEN: TOKEN, OPENAI_API_KEY: KEY } }],
      auto_detect: false,
      quiet_seconds: 0.3,
    });
    // a cloned repository keeps two of the user's entries: the one whose env holds the keys is gone from the list
    sandbox.write("project/.uuldanarc.json", { providers: ["plan", "line"] });
    const terminal = start();
    await terminal.waitFor("plan agent ready");
    terminal.type(`use ${TOKEN} for the deploy\r`);
    await terminal.waitFor("line agent ready", 20_000);
    const transcript = [
      "--- Stand-in plan (plan), as its screen showed it ---",
      "plan agent ready",
      "(the user's last request, quoted at the top)",
      "The deploy script reads the key [redacted] from its settings; I left it there.",
    ].join("\n");
    const pid = readFileSync(join(sandbox.dir, "pids"), "utf8").trim().split(" ")[1]!;
    expect(readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").at(-2)).toBe(`${PREAMBLE}\n\n${transcript}\n`);
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);

    const files = dataFiles();
    for (const [file, text] of files) for (const leak of [TOKEN, "sk-live-4f9a8b7c", "6d5e4f3a2b1c"]) expect(text.includes(leak), `${leak} in ${file}`).toBe(false);
    const session = sessionFolder();
    expect(files.get(`${session}/prompt-1.txt`)).toBe(`${PREAMBLE}\n\n${transcript}\n`);
    expect(files.get(`${session}/conversation-1.txt`)).toBe(
      [
        "plan agent ready",
        "> use [redacted] for the deploy",
        "The deploy script reads the key [redacted] from its settings; I left it there.",
        `⎿  You've hit your weekly limit (account [redacted]) · resets ${LIMIT_RESET.text}`,
        "",
      ].join("\n"),
    );
    const events = journal(files);
    expect(events.find((event) => event.type === "user")?.text).toBe("use [redacted] for the deploy");
    expect(events.find((event) => event.type === "limit")?.text).toBe(`You've hit your weekly limit (account [redacted]) · resets ${LIMIT_RESET.text}`);
  });

  it("are blanked by cooldowns list in a row written unredacted", async () => {
    sandbox.write("config/config.json", { providers: ["plan", { id: "line", name: "vault", env: { ACCOUNT_TOKEN: TOKEN } }], auto_detect: false });
    sandbox.write("project/.uuldanarc.json", { providers: ["plan"] });
    const until = new Date(Date.now() + 90 * 60_000).toISOString();
    sandbox.write("data/cooldowns.json", { version: 1, entries: { plan: { until, since: null, source: "inferred", kind: "weekly", text: `limit hit for ${TOKEN}` } } });
    const json = JSON.parse((await sandbox.run(["cooldowns", "list", "--json"])).stdout) as { text: string }[];
    expect(json.map((row) => row.text)).toEqual(["limit hit for [redacted]"]);
  });
});

describe("secrets added to config.json during a session", () => {
  it("are blanked from the reload on: in the journal and the next run's conversation", async () => {
    const LATER = "vault-9a8b7c6d5e";
    sandbox.write("config/config.json", { providers: ["plan", "line"], auto_detect: false, quiet_seconds: 0.3 });
    const terminal = start();
    await terminal.waitFor("plan agent ready");
    // the user gives uuldana a new account and a new pattern while the first agent runs
    sandbox.write("config/config.json", {
      providers: ["plan", "line", { id: "line", name: "vault", env: { VAULT_TOKEN: LATER } }],
      auto_detect: false,
      quiet_seconds: 0.3,
      redact: ["ghp_[A-Za-z0-9]{8,}"],
    });
    terminal.type("please deploy\r");
    await terminal.waitFor("line agent ready", 20_000);
    terminal.type(`${LATER} and ghp_abcdefgh12 are the new tokens\r`);
    await waitFor(() => terminal.text().includes("you said: "), "the line agent's answer", 10_000);
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);

    const files = dataFiles();
    for (const [file, text] of files) for (const leak of [LATER, "ghp_abcdefgh12"]) expect(text.includes(leak), `${leak} in ${file}`).toBe(false);
    const typed = journal(files).filter((event) => event.type === "user" && event.entry === "line");
    expect(typed.map((event) => event.text)).toEqual(["[redacted] and [redacted] are the new tokens", "/exit"]);
    expect(files.get(`${sessionFolder()}/conversation-2.txt`)).toContain("you said: [redacted] and [redacted] are the new tokens\n");
  });
});
