import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { stripEscapes } from "../core/base/ansi.js";
import { EXIT, installAgents } from "./agents.js";
import { bin, handoffPreamble, LIMIT_RESET, linkAgent, makeSandbox, root, standInManifest, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// Chains of chat stand-ins that draw a welcome box, a version line and a footer, show each user line back, and end
// on a long limit message the terminal or the agent wraps: what the next agent is started with is the conversation
// and nothing else, read from each agent's own transcript where its adapter reads one.

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];
const MARK = "(the user's last request, quoted at the top)";

// The chat stand-in's adapter: its transcript is <CHAT_TRANSCRIPT>/<session id>.jsonl, the limit an error entry.
const ADAPTER = `import { join } from "node:path";
import { jsonLines, readTranscriptFile } from ${JSON.stringify(pathToFileURL(join(root, "dist", "core", "index.js")).href)};
export default {
  transcript(query) {
    const folder = query.env.CHAT_TRANSCRIPT;
    if (!folder || !query.sessionId) return undefined;
    const file = join(folder, query.sessionId + ".jsonl");
    const text = readTranscriptFile(file);
    if (text === undefined) return undefined;
    const turns = jsonLines(text).filter((entry) => ["user", "agent", "tool"].includes(entry.role)).map((entry) => ({ role: entry.role, text: entry.text }));
    return { file, turns };
  },
};
`;

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox, ["line"]);
  for (const id of ["chat1", "chat2"]) {
    linkAgent(sandbox, id, "chat-agent.mjs");
    sandbox.write(
      `config/providers/${id}.json`,
      standInManifest(id, {
        exit: EXIT,
        adapter: "./chat.mjs",
        session_id: { args: ["--session-id", "{id}"] },
        chrome: ["^✻ Welcome to the chat stand-in", "^chat stand-in \\d+\\.\\d+\\.\\d+ · ", "\\? for shortcuts$"],
      }),
    );
  }
  sandbox.write("config/providers/chat.mjs", ADAPTER);
  mkdirSync(join(sandbox.dir, "transcripts"));
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

interface Chain {
  cols: number;
  wrap?: string;
  // the entries' own env beyond their names and limit turns
  transcripts?: boolean;
}

// chat1 meets its limit at the user's second line, chat2 at its second turn (its first prompt is the handoff), then
// the line agent shows what it was started with.
function configure(chain: Chain): void {
  const entry = (id: string, limitAt: number): Record<string, unknown> => ({
    id,
    env: { CHAT_NAME: id, CHAT_LIMIT_AT: String(limitAt), CHAT_WRAP: chain.wrap ?? "terminal", ...(chain.transcripts ? { CHAT_TRANSCRIPT: join(sandbox.dir, "transcripts") } : {}) },
  });
  sandbox.write("config/config.json", { providers: [entry("chat1", 2), entry("chat2", 2), "line"], auto_detect: false, quiet_seconds: 0.3, dismiss_seconds: 5 });
}

function start(cols: number): TestTerminal {
  const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, TZ: "Europe/Berlin" }, cols, rows: 30 });
  terminals.push(terminal);
  return terminal;
}

// The user talks to chat1 (one line answered, the next refused), to chat2 (one line refused); the line agent's
// first prompt is returned, with the session's id.
async function runChain(chain: Chain, between?: () => void): Promise<{ first: string; second: string; session: string; output: string }> {
  configure(chain);
  const terminal = start(chain.cols);
  await terminal.waitFor("chat agent chat1 ready");
  terminal.type("Which colour is the lighthouse on the north pier?\r");
  await terminal.waitFor("chat1 answers 1");
  between?.();
  terminal.type("And how tall is it?\r");
  await terminal.waitFor("chat agent chat2 ready", 20_000);
  await terminal.waitFor("chat2 answers 1");
  terminal.type("When was it built?\r");
  await terminal.waitFor("line agent ready", 20_000);
  const args = JSON.parse(/line agent ready; args: (\[.*\]); LEVEL_ENV/.exec(terminal.raw.replace(/\r?\n/g, " "))![1]!) as string[];
  terminal.type("/exit\r");
  await terminal.exited;
  const session = readdirSync(join(sandbox.data, "sessions"))[0]!;
  const first = readFileSync(join(sandbox.data, "sessions", session, "prompt-1.txt"), "utf8");
  return { first, second: args.at(-1)!, session, output: stripEscapes(terminal.raw) };
}

const ASK = ["Which colour is the lighthouse on the north pier?", "And how tall is it?", "When was it built?"];
// The first handoff when chat1's part comes from its screen: its greeting, the first question and answer, the mark
// where the second question (quoted at the top) stood.
const FROM_CHAT1_SCREEN = [
  handoffPreamble("Stand-in chat1 (chat1)", ASK[1]),
  "",
  "--- Stand-in chat1 (chat1), as its screen showed it ---",
  "chat agent chat1 ready",
  `› ${ASK[0]}`,
  `● chat1 answers 1: noted "${ASK[0].slice(0, 40)}".`,
  MARK,
  "",
].join("\n");

// The user's two lines to chat1, the second meeting its limit; the line agent takes over and is left. The session's id.
async function limitOnSecondLine(): Promise<string> {
  const terminal = start(110);
  await terminal.waitFor("chat agent chat1 ready");
  terminal.type(`${ASK[0]}\r`);
  await terminal.waitFor("chat1 answers 1");
  terminal.type(`${ASK[1]}\r`);
  await terminal.waitFor("line agent ready", 20_000);
  terminal.type("/exit\r");
  await terminal.exited;
  return readdirSync(join(sandbox.data, "sessions"))[0]!;
}


// Nothing of a limit screen, an exit or an agent's chrome: no run of four words of the limit message, no menu.
function expectOnlyConversation(prompt: string): void {
  const words = `You've hit your usage limit for the stand-in chat plan; it resets ${LIMIT_RESET.text}. Upgrade at https://chat.example/plans to keep working without waiting for the reset, or switch to another model in the meantime.`
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, " ")
    .trim()
    .split(" ");
  const flat = prompt.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ");
  for (let i = 0; i + 4 <= words.length; i++) expect(flat).not.toContain(` ${words.slice(i, i + 4).join(" ")} `);
  for (const gone of ["/exit", "Goodbye", "What do you want to do", "Wait for the reset", "Welcome to the chat stand-in", "chat stand-in 1.2.3", "? for shortcuts"]) {
    expect(prompt).not.toContain(gone);
  }
}

describe("a handoff from the screen", () => {
  for (const cols of [80, 110, 200]) {
    for (const wrap of ["terminal", "agent", "box", "batches", "twice"]) {
      it(`carries every turn once and nothing of the limit message (${wrap}, ${cols} columns), the exit or the chrome`, async () => {
        const { first, second } = await runChain({ cols, wrap });
        expect(first).toBe(FROM_CHAT1_SCREEN);
        expect(second).toBe(
          [
            handoffPreamble("Stand-in chat2 (chat2)", ASK[2], ["Stand-in chat1 (chat1)"]),
            "",
            "--- Stand-in chat1 (chat1), as its screen showed it ---",
            "chat agent chat1 ready",
            `› ${ASK[0]}`,
            `● chat1 answers 1: noted "${ASK[0].slice(0, 40)}".`,
            `› ${ASK[1]}`,
            "",
            "--- Stand-in chat2 (chat2), as its screen showed it ---",
            "chat agent chat2 ready",
            `● chat2 answers 1: noted "${handoffPreamble("Stand-in chat1 (chat1)", ASK[1]).slice(0, 40)}".`,
            MARK,
            "",
          ].join("\n"),
        );
        expectOnlyConversation(first);
        expectOnlyConversation(second);
      });
    }
  }
});

// The chain's sessions show lines about where each part came from.
async function sources(session: string): Promise<string[]> {
  const show = await sandbox.run(["sessions", "show", session]);
  return show.stdout.split("\n").filter((line) => line.includes("'s conversation, from ")).map((line) => line.slice(7).replace(/ read in [\d.]+ ms\)/, " read in N ms)"));
}

describe("a handoff from the agents' own transcripts", () => {
  const transcripts = (): string => join(sandbox.dir, "transcripts");
  const fileOf = (name: string): string => join(transcripts(), name);

  it("carries each turn once, labelled, from the files the agents wrote, and sessions show names each part's source", async () => {
    const { first, second, session } = await runChain({ cols: 110, transcripts: true });
    const chat1 = [
      "--- Stand-in chat1 (chat1), from its transcript ---",
      `User: ${ASK[0]}`,
      "",
      "Stand-in chat1 (tool): Read notes-1.md",
      "",
      `Stand-in chat1: chat1 answers 1: noted "${ASK[0].slice(0, 40)}".`,
      "",
    ];
    expect(first).toBe([handoffPreamble("Stand-in chat1 (chat1)", ASK[1]), "", ...chat1, `User: ${MARK}`, ""].join("\n"));
    expect(second).toBe(
      [
        handoffPreamble("Stand-in chat2 (chat2)", ASK[2], ["Stand-in chat1 (chat1)"]),
        "",
        ...chat1,
        `User: ${ASK[1]}`,
        "",
        "--- Stand-in chat2 (chat2), from its transcript ---",
        "Stand-in chat2 (tool): Read notes-1.md",
        "",
        `Stand-in chat2: chat2 answers 1: noted "${handoffPreamble("Stand-in chat1 (chat1)", ASK[1]).slice(0, 40)}".`,
        "",
        `User: ${MARK}`,
        "",
      ].join("\n"),
    );
    expectOnlyConversation(second);
    const files = readdirSync(transcripts()).sort();
    expect(files).toHaveLength(2);
    const shown = await sources(session);
    expect(shown).toHaveLength(3);
    for (const [index, entry] of ["chat1", "chat2"].entries()) {
      // the folder is the entry's own setting, and an entry's settings are kept out of the journal
      const file = files.find((name) => readFileSync(fileOf(name), "utf8").includes(`"role":"agent","text":"${entry} answers 1`))!;
      expect(shown[index]).toBe(`${entry}'s conversation, from its own transcript ([redacted]/${file}, 4 turns read in N ms): ${join(sandbox.data, "sessions", session, `conversation-${index + 1}.txt`)}`);
    }
    expect(shown[2]).toBe(`line's conversation, from its screen: ${join(sandbox.data, "sessions", session, "conversation-3.txt")}`);
  });

  it("saves a transcript's control characters (C1 CSI, NEL, DEL, ESC) in no file raw: the JSON reads back as the agent wrote it", async () => {
    const controls = " \u009b31m\u0085\u007f\u001b[2J\u0007 end";
    configure({ cols: 110, transcripts: true });
    sandbox.write("config/config.json", {
      providers: [{ id: "chat1", env: { CHAT_NAME: "chat1", CHAT_LIMIT_AT: "2", CHAT_TRANSCRIPT: transcripts(), CHAT_CONTROLS: controls } }, "line"],
      auto_detect: false,
      quiet_seconds: 0.3,
      dismiss_seconds: 5,
    });
    const terminal = start(110);
    await terminal.waitFor("chat agent chat1 ready");
    terminal.type("Which colour is the lighthouse on the north pier?\r");
    await terminal.waitFor("chat1 answers 1");
    terminal.type("And how tall is it?\r");
    await terminal.waitFor("line agent ready", 20_000);
    terminal.type("/exit\r");
    await terminal.exited;
    const session = readdirSync(join(sandbox.data, "sessions"))[0]!;
    const folder = join(sandbox.data, "sessions", session);
    const answer = `chat1 answers 1: noted "${ASK[0].slice(0, 40)}".${controls}`;
    const names = readdirSync(folder).sort();
    expect(names).toEqual(expect.arrayContaining(["conversation-1.txt", "journal.jsonl", "prompt-1.txt", "transcript-1.txt", "turns-1.json"]));
    // every file of the session: line breaks and tabs, and no other control character, as a character of its text
    for (const name of names) expect([name, readFileSync(join(folder, name), "utf8").match(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g)]).toEqual([name, null]);
    // the JSON spells them as escapes, which read back as the same strings
    const turns = JSON.parse(readFileSync(join(folder, "turns-1.json"), "utf8")) as { role: string; text: string }[];
    expect(turns.find((turn) => turn.role === "agent")?.text).toBe(answer);
    expect(readFileSync(join(folder, "turns-1.json"), "utf8")).toContain(String.raw` \u009b31m\u0085\u007f\u001b[2J\u0007 end`);
    // the text files spell them the way uuldana prints one
    // the handoff itself carries the answer without them, as it always did
    expect(readFileSync(join(folder, "prompt-1.txt"), "utf8")).toContain(`Stand-in chat1: chat1 answers 1: noted "${ASK[0].slice(0, 40)}". 31m end\n`);
  });

  it("falls back to the screen for a run whose transcript was removed while it ran, and says so", async () => {
    const { first, session, output } = await runChain({ cols: 110, transcripts: true }, () => rmSync(transcripts(), { recursive: true }));
    expect(output).toMatch(
      /uuldana: chat1's [\w-]+ (?:limit|allowance) is gone; it rests until [\d-]+ [\d:]+ UTC; continuing with chat2 \(Stand-in chat2 1\.0\.0\) at ask with the conversation so far \(chat1's part from its screen: its transcript could not be found or read\)/,
    );
    expect(first).toBe(FROM_CHAT1_SCREEN);
    expect((await sources(session))[0]).toBe(`chat1's conversation, from its screen (its transcript could not be found or read): ${join(sandbox.data, "sessions", session, "conversation-1.txt")}`);
  });

  it("fills in from the screen only what the file lacks at its end: an answer drawn and not yet recorded", async () => {
    configure({ cols: 110, transcripts: true });
    sandbox.write("config/config.json", {
      providers: [{ id: "chat1", env: { CHAT_NAME: "chat1", CHAT_LIMIT_AT: "2", CHAT_TRANSCRIPT: transcripts(), CHAT_PARTIAL: "1" } }, "line"],
      auto_detect: false,
      quiet_seconds: 0.3,
      dismiss_seconds: 5,
    });
    const session = await limitOnSecondLine();
    expect(readFileSync(join(sandbox.data, "sessions", session, "prompt-1.txt"), "utf8")).toBe(
      [
        handoffPreamble("Stand-in chat1 (chat1)", ASK[1]),
        "",
        "--- Stand-in chat1 (chat1), from its transcript ---",
        `User: ${ASK[0]}`,
        "",
        "Stand-in chat1 (tool): Read notes-1.md",
        "",
        `Stand-in chat1: chat1 answers 1: noted "${ASK[0].slice(0, 40)}".`,
        "",
        `User: ${MARK}`,
        "",
        "(on its screen after the end of its transcript)",
        "● chat1 begins: the pier light stands nineteen metres",
        "",
      ].join("\n"),
    );
  });
});

describe("the workspace in the handoff, when the user asks for it", () => {
  const git = (...args: string[]): void => {
    const run = spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: sandbox.project, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
  };

  // chat1 meets its limit at the user's second line; the prompt the line agent was started with
  async function handedOn(workspace: boolean): Promise<string> {
    sandbox.write("config/config.json", {
      providers: [{ id: "chat1", env: { CHAT_NAME: "chat1", CHAT_LIMIT_AT: "2" } }, "line"],
      auto_detect: false,
      quiet_seconds: 0.3,
      dismiss_seconds: 5,
      handoff_workspace: workspace,
    });
    const session = await limitOnSecondLine();
    return readFileSync(join(sandbox.data, "sessions", session, "prompt-1.txt"), "utf8");
  }

  it("names the branch, the status and the size of uncommitted changes, never the diff", async () => {
    rmSync(join(sandbox.project, ".git"), { recursive: true });
    git("init", "-q", "-b", "harbour");
    sandbox.write("project/chart.md", "north pier\n");
    sandbox.write("project/log.md", "1874\n");
    git("add", ".");
    git("commit", "-q", "-m", "first");
    sandbox.write("project/chart.md", "north pier, saffron\n");
    sandbox.write("project/log.md", "built 1874\n");
    git("add", "log.md");
    sandbox.write("project/notes.txt", "nineteen metres\n");
    const prompt = await handedOn(true);
    expect(prompt.split("\n\n").slice(1, 3)).toEqual([
      [
        "The git workspace at the handoff (paths from the repository's root; the changes themselves are not included):",
        "Branch: harbour",
        "Status: 1 staged, 1 unstaged, 1 untracked",
        "   M chart.md",
        "  M  log.md",
        "  ?? notes.txt",
        "Uncommitted changes against the last commit:",
        "  chart.md | 2 +-",
        "  log.md   | 2 +-",
        "  2 files changed, 2 insertions(+), 2 deletions(-)",
      ].join("\n"),
      "Continue with the user's last request, quoted here whole:",
    ]);
    expect(prompt).not.toContain("saffron");
  });

  it("says nothing of a workspace outside any repository", async () => {
    rmSync(join(sandbox.project, ".git"), { recursive: true });
    expect(await handedOn(true)).toBe(FROM_CHAT1_SCREEN);
  });
});

describe("the session id uuldana chooses", () => {
  it("is not given when the entry's own arguments pick a session (the manifest's unless), and the screen is read", async () => {
    sandbox.write("config/providers/chat1.json", { ...standInManifest("chat1", { exit: EXIT, adapter: "./chat.mjs", session_id: { args: ["--session-id", "{id}"], unless: ["--continue"] } }) });
    sandbox.write("config/config.json", {
      providers: [{ id: "chat1", args: ["--continue"], env: { CHAT_NAME: "chat1", CHAT_LIMIT_AT: "2", CHAT_TRANSCRIPT: join(sandbox.dir, "transcripts") } }, "line"],
      auto_detect: false,
      quiet_seconds: 0.3,
      dismiss_seconds: 5,
    });
    const session = await limitOnSecondLine();
    const journal = readFileSync(join(sandbox.data, "sessions", session, "journal.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect((journal.find((event) => event.type === "run-start") as { argv: string[] }).argv.slice(1)).toEqual(["--ask", "--continue"]);
    expect(journal.find((event) => event.type === "conversation")).toMatchObject({ entry: "chat1", source: "screen", fallback: "its transcript could not be found or read" });
    expect(readdirSync(join(sandbox.dir, "transcripts"))).toEqual([]);
  });
});
