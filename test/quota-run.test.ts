import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { stripEscapes } from "../core/base/ansi.js";
import { EXIT, installAgents } from "./agents.js";
import { bin, fixtures, LIMIT_RESET, linkAgent, makeSandbox, standInManifest, waitFor, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// A chat stand-in that writes its own quota numbers to a file after each answer, read by its adapter's quota hooks:
// the session rotates before the wall at a turn boundary, and stops on the agent's own word that its allowance is
// gone, in real terminals.

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];
const ASK = ["Which colour is the lighthouse on the north pier?", "And how tall is it?", "When was it built?"];
// the reset the agent's own numbers give, to the second, unlike the one its printed message names
const RESETS_AT = new Date(Math.floor(Date.now() / 1000) * 1000 + 3 * 3600_000 + 17_000).toISOString();

const ADAPTER = `import { readFileSync } from "node:fs";
export default {
  quotaFiles(query) {
    return query.env.CHAT_QUOTA ? [query.env.CHAT_QUOTA] : [];
  },
  quota(query) {
    try {
      return JSON.parse(readFileSync(query.env.CHAT_QUOTA, "utf8"));
    } catch {
      return undefined;
    }
  },
};
`;

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox, ["line"]);
  linkAgent(sandbox, "chat1", "chat-agent.mjs");
  sandbox.write("config/providers/chat1.json", standInManifest("chat1", { exit: EXIT, adapter: "./chat.mjs", quota: { source: "file" } }));
  sandbox.write("config/providers/chat.mjs", ADAPTER);
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

function configure(env: Record<string, string>, more: Record<string, unknown> = {}): void {
  const chat = { id: "chat1", env: { CHAT_NAME: "chat1", CHAT_QUOTA: join(sandbox.dir, "quota.json"), ...env } };
  sandbox.write("config/config.json", { providers: [chat, "line"], auto_detect: false, quiet_seconds: 0.3, dismiss_seconds: 5, ...more });
}

function start(): TestTerminal {
  // the reset reaches the agent through uuldana's own environment: an entry's env values are kept out of the journal
  const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, TZ: "UTC", CHAT_RESETS_AT: RESETS_AT }, cols: 160, rows: 30 });
  terminals.push(terminal);
  return terminal;
}

function journal(): Record<string, unknown>[] {
  const folder = join(sandbox.data, "sessions", readdirSync(join(sandbox.data, "sessions"))[0]!);
  return readFileSync(join(folder, "journal.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
}

function prompt(): string {
  const folder = join(sandbox.data, "sessions", readdirSync(join(sandbox.data, "sessions"))[0]!);
  return readFileSync(join(folder, "prompt-1.txt"), "utf8");
}

async function cooldowns(): Promise<{ entry: string; until: string; source: string }[]> {
  const list = await sandbox.run(["cooldowns", "list", "--json"]);
  return JSON.parse(list.stdout) as { entry: string; until: string; source: string }[];
}

// the user's first two lines, each answered; the second typed once the first answer's reading is in the journal
async function twoTurns(terminal: TestTerminal): Promise<void> {
  await terminal.waitFor("chat agent chat1 ready");
  terminal.type(`${ASK[0]}\r`);
  await terminal.waitFor("chat1 answers 1");
  await waitFor(() => journal().some((event) => event.type === "quota"), "the first reading");
  terminal.type(`${ASK[1]}\r`);
  await terminal.waitFor("chat1 answers 2");
}

async function leave(terminal: TestTerminal): Promise<void> {
  await terminal.waitFor("line agent ready", 20_000);
  terminal.type("/exit\r");
  await terminal.exited;
}

describe("rotation before the wall", () => {
  it("moves on at the next idle prompt once a window is nearly spent, with a native event and the window's exact reset", async () => {
    const notified = join(sandbox.dir, "notified.jsonl");
    configure({ CHAT_USED: "50,97" }, { rotate_at_percent_left: 5, notify_command: [process.execPath, join(fixtures, "notify-record.mjs"), notified] });
    const terminal = start();
    await twoTurns(terminal);
    await leave(terminal);
    // the user's notify_command is told of the rotation
    expect(JSON.parse(readFileSync(notified, "utf8"))).toEqual({
      event: "rotate",
      session: readdirSync(join(sandbox.data, "sessions"))[0],
      from: "chat1",
      to: "line",
      until: RESETS_AT,
      text: "chat1 was rotated before its allowance ran out; continuing with line",
    });
    const events = journal();
    expect(events.filter((event) => event.type === "limit")).toEqual([
      expect.objectContaining({ entry: "chat1", source: "native", reason: "rotate", kind: "session", reset_at: RESETS_AT, after: "turn boundary", window: "five_hour", percent_left: 3, threshold: 5 }),
    ]);
    expect(events.find((event) => event.type === "handoff-from")).toMatchObject({ entry: "chat1", reason: "rotate" });
    expect(events.filter((event) => event.type === "quota").map((event) => (event.windows as { usedPercent: number }[])[0]!.usedPercent)).toEqual([50, 97]);
    expect(await cooldowns()).toEqual([expect.objectContaining({ entry: "chat1", until: RESETS_AT, source: "native" })]);
    expect(prompt().split("\n")[0]).toBe(
      "You are continuing a conversation from Stand-in chat1 (chat1), which was rotated before its usage allowance ran out (its five_hour window had 3% left, at or below rotate_at_percent_left 5). " +
        "Below is the conversation so far, each turn once and in order, labelled with who said it: from the agents' own transcripts where uuldana could read them, else as their screens showed it. " +
        "Hidden reasoning, the earlier agents' memory, approvals they had been given and tool calls still running did not carry over: check the state of the files before relying on them.",
    );
    expect(stripEscapes(terminal.raw)).toContain(
      `uuldana: chat1: its five_hour window had 3% left, at or below rotate_at_percent_left 5, so it was rotated before its allowance ran out; it rests until ${RESETS_AT.slice(0, 10)} ${RESETS_AT.slice(11, 16)} UTC; continuing with line (Stand-in line 1.0.0) at ask with the conversation so far`,
    );
    // the entry's latest reading, kept for the next command, readable by the user only
    const [file] = readdirSync(join(sandbox.data, "quota"));
    expect(statSync(join(sandbox.data, "quota", file!)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(sandbox.data, "quota", file!), "utf8"))).toMatchObject({ entry: "chat1", windows: [{ name: "five_hour", used_percent: 97, resets_at: RESETS_AT }] });
  });

  it("waits while the agent still works and while the user's line is half typed, then moves on", async () => {
    // a quiet of a second: the stand-in answers the line the moment it reads it, and a loaded machine that wakes it
    // late must not look like an agent that went quiet after the user's Enter
    configure({ CHAT_USED: "50,97,98", CHAT_WORK_LINES: "6" }, { rotate_at_percent_left: 5, quiet_seconds: 1 });
    const terminal = start();
    await twoTurns(terminal);
    // typed while the agent still works, and left half done
    terminal.type("half a li");
    await terminal.waitFor("working on step 6 of 6");
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(terminal.raw).not.toContain("line agent ready");
    terminal.type("ne\r");
    await terminal.waitFor("chat1 answers 3");
    await leave(terminal);
    const handed = prompt();
    expect(handed).toContain("quoted here whole:\n\n> half a line\n");
    expect(handed).toContain('(the user\'s last request, quoted at the top)\n● chat1 answers 3: noted "half a line".');
    // moved on once the third answer's work was done, not in the middle of it
    expect(handed.slice(handed.indexOf('● chat1 answers 3: noted "half a line".')).trimEnd().split("\n").slice(-2)).toEqual(["  working on step 6 of 6", "  ? for shortcuts"]);
  });

  it("is off unless asked: a nearly spent window alone moves nothing", async () => {
    configure({ CHAT_USED: "50,99", CHAT_LIMIT_AT: "3" });
    const terminal = start();
    await twoTurns(terminal);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(terminal.raw).not.toContain("line agent ready");
    terminal.type(`${ASK[2]}\r`);
    await leave(terminal);
    expect(journal().filter((event) => event.type === "limit")).toEqual([expect.objectContaining({ source: "inferred", reason: "limit" })]);
  });
});

describe("a native stop", () => {
  it("stops on the agent's own word that its allowance is gone, nothing printed, with the exact reset", async () => {
    configure({ CHAT_USED: "50,100", CHAT_EXHAUSTED_AT: "2" });
    const terminal = start();
    await twoTurns(terminal);
    await leave(terminal);
    expect(journal().filter((event) => event.type === "limit")).toEqual([
      expect.objectContaining({ entry: "chat1", source: "native", reason: "limit", kind: "session", reset_at: RESETS_AT, after: "native", text: "five-hour allowance used up" }),
    ]);
    expect(await cooldowns()).toEqual([expect.objectContaining({ entry: "chat1", until: RESETS_AT, source: "native" })]);
  });

  it("is one event, native, with the printed text beside it, when the agent prints its limit too", async () => {
    configure({ CHAT_USED: "50,100", CHAT_EXHAUSTED_AT: "2", CHAT_LIMIT_AT: "2" });
    const terminal = start();
    await terminal.waitFor("chat agent chat1 ready");
    terminal.type(`${ASK[0]}\r`);
    await terminal.waitFor("chat1 answers 1");
    terminal.type(`${ASK[1]}\r`);
    await leave(terminal);
    const limits = journal().filter((event) => event.type === "limit");
    expect(limits).toHaveLength(1);
    expect(limits[0]).toMatchObject({ source: "native", reason: "limit", reset_at: RESETS_AT, after: "quiet" });
    expect(String(limits[0]!.text)).toContain(`You've hit your usage limit for the stand-in chat plan; it resets ${LIMIT_RESET.text}.`);
  });
});
