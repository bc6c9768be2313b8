import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { EXIT, installAgents } from "./agents.js";
import { bin, linkAgent, makeSandbox, sessionJournals, standInManifest, waitFor, type JournalLine, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// Who is speaking, the languages agents speak, the vendor's clock and rate-limit wrappers, in real runs: a stand-in
// (notice-agent.mjs) draws its assistant's answers in the default colour and its own notices in yellow, and the run
// moves on to the line stand-in when, and only when, the stand-in's own notice says its allowance is gone.

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox, ["line"]);
  linkAgent(sandbox, "notice", "notice-agent.mjs");
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

// The notice stand-in first, the line stand-in after it; its manifest with these fields.
function setUp(manifest: Record<string, unknown> = {}): void {
  sandbox.write("config/providers/notice.json", standInManifest("notice", { exit: EXIT, ...manifest }));
  sandbox.write("config/config.json", { providers: ["notice", "line"], auto_detect: false, quiet_seconds: 0.3 });
}

function open(env: Record<string, string> = {}): TestTerminal {
  const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, TZ: "Europe/Berlin", ...env }, cols: 220 });
  terminals.push(terminal);
  return terminal;
}

const journal = (): JournalLine[] => sessionJournals(sandbox.data).flat();
const ofType = (type: string): JournalLine[] => journal().filter((line) => line.type === type);

// Types a line for the stand-in to answer, and waits for its answer on the screen.
async function ask(terminal: TestTerminal, line: string, answer: string): Promise<void> {
  terminal.type(`${line}\r`);
  await terminal.waitFor(answer);
}

// Has the notice stand-in print its own notice and waits for the line stand-in to take over.
async function failsOver(terminal: TestTerminal): Promise<void> {
  terminal.type("limit\r");
  await terminal.waitFor("line agent ready", 20_000);
  terminal.type("/exit\r");
  await terminal.exited;
}

// The notice stand-in prints its notice, is given a second of quiet (more than quiet_seconds) and still answers.
async function staysOn(terminal: TestTerminal, notice: string): Promise<void> {
  terminal.type("limit\r");
  await terminal.waitFor(notice.slice(0, 40));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await ask(terminal, "still there", "I answered: still there");
  expect(terminal.raw).not.toContain("line agent ready");
  terminal.type("/exit\r");
  await terminal.exited;
  expect(ofType("limit")).toEqual([]);
}

// The stand-in's assistant explains a limit error (left running: the next question is answered by it), then the
// agent's own notice of the same words moves the session on.
async function explainedThenNoticed(terminal: TestTerminal): Promise<void> {
  await terminal.waitFor("notice agent ready");
  await ask(terminal, "explain", "give the worker another key, then run it again");
  await waitFor(() => ofType("ignored").length === 1, "the refused candidate in the journal");
  await ask(terminal, "next question", "I answered: next question");
  expect(terminal.raw).not.toContain("line agent ready");
  await failsOver(terminal);
}

describe("who is speaking", () => {
  it("leaves the agent running when its assistant explains a limit error in its answer, and moves on at its own notice", async () => {
    setUp({ notice_style: { colors: [3] } });
    const terminal = open();
    await explainedThenNoticed(terminal);

    const [refused, stop] = ofType("candidate");
    expect(refused).toMatchObject({
      candidate: 1,
      stop: false,
      facts: { speaker: { drawn: { fg: null, bold: false, dim: false, inverse: false }, place: "conversation", notice: { colors: [3] } } },
    });
    expect(String(refused!.text)).toMatch(/^You've hit your weekly limit · resets Dec 3, 9am \(Europe\/Berlin\)/);
    expect((refused!.reasons as string[]).at(-1)).toBe("not a stop: drawn as the agent's prose (default colour), not as it draws its notices (colour 3)");
    expect(ofType("ignored")[0]).toMatchObject({ candidate: 1, why: "who spoke" });
    expect(stop).toMatchObject({ candidate: 2, stop: true, facts: { speaker: { drawn: { fg: 3, bold: false, dim: false, inverse: false }, glyph: "⎿", place: "conversation" } } });
    expect(ofType("limit")).toHaveLength(1);

    const report = await sandbox.run(["report"]);
    expect(report.code).toBe(0);
    const [id] = readdirSync(join(sandbox.data, "sessions"));
    const written = readFileSync(join(sandbox.data, "sessions", id!, "report.md"), "utf8");
    expect(written).toContain("its words read as a stop, but drawn as the agent's prose (default colour), not as it draws its notices (colour 3), so at ");
  });

  it("leaves the agent running when its own records hold the line in its assistant's answer, and moves on at its own notice", async () => {
    // the stand-in as Claude Code, under the built-in manifest (which names no notice style): its session file says
    linkAgent(sandbox, "claude", "notice-agent.mjs");
    sandbox.write(".claude/.credentials.json", "{}");
    sandbox.write("config/config.json", { providers: ["claude-code", "line"], auto_detect: false, quiet_seconds: 0.3 });
    const terminal = open();
    await explainedThenNoticed(terminal);
    const [refused, stop] = ofType("candidate");
    expect(refused).toMatchObject({ candidate: 1, stop: false, facts: { speaker: { record: "agent", drawn: { fg: null } } } });
    expect((refused!.reasons as string[]).at(-1)).toBe("not a stop: the agent's assistant wrote it (its own records hold it in an answer)");
    expect(stop).toMatchObject({ candidate: 2, stop: true, facts: { speaker: { drawn: { fg: 3 }, glyph: "⎿" } } });
    expect(stop!.facts).not.toHaveProperty("speaker.record");
  });

  it("reads the assistant's explanation by its words alone where the manifest names no notice style", async () => {
    setUp();
    const terminal = open();
    await terminal.waitFor("notice agent ready");
    terminal.type("explain\r");
    await terminal.waitFor("line agent ready", 20_000);
    terminal.type("/exit\r");
    await terminal.exited;
    expect(ofType("candidate")[0]).toMatchObject({ stop: true, facts: { speaker: { drawn: { fg: null }, place: "conversation" } } });
  });
});

describe("the languages agents speak", () => {
  it("moves on when the stand-in's own notice says in Chinese that its 5-hour allowance is used up", async () => {
    setUp();
    await failsOver(open({ NOTICE_TEXT: "已达到 5 小时的使用上限。您的限额将在 2027-01-05 09:00:00 重置。" }));
    expect(ofType("limit")[0]).toMatchObject({ text: "已达到 5 小时的使用上限。您的限额将在 2027-01-05 09:00:00 重置。" });
    expect(ofType("candidate")[0]).toMatchObject({ stop: true, facts: { language: "zh" } });
  });

  it("moves on when the notice says it in Spanish", async () => {
    setUp();
    await failsOver(open({ NOTICE_TEXT: "Límite de uso alcanzado hasta 15:00" }));
    expect(ofType("candidate")[0]).toMatchObject({ stop: true, facts: { language: "latin" } });
  });

  it("moves on when the notice says it in Japanese", async () => {
    setUp();
    await failsOver(open({ NOTICE_TEXT: "15:00まで使用制限中" }));
    expect(ofType("candidate")[0]).toMatchObject({ stop: true, facts: { language: "ja" } });
  });

  it("leaves the agent running at a Chinese warning that the allowance is almost used up", async () => {
    setUp();
    const terminal = open({ NOTICE_TEXT: "额度即将用完，请注意。" });
    await terminal.waitFor("notice agent ready");
    await staysOn(terminal, "额度即将用完，请注意。");
  });
});

describe("the vendor's clock", () => {
  it("reads a reset printed without a zone in the manifest's time_zone", async () => {
    setUp({ time_zone: "Asia/Shanghai" });
    await failsOver(open({ NOTICE_TEXT: "已达到 5 小时的使用上限。您的限额将在 2027-01-05 09:00:00 重置。" }));
    // 09:00 in Shanghai is 01:00 UTC (02:00 in the user's Berlin), and a minute's margin
    expect(ofType("candidate")[0]).toMatchObject({ reset_at: "2027-01-05T01:01:00.000Z", zone: "Asia/Shanghai" });
  });

  it("reads it in an entry's time_zone over the manifest's", async () => {
    setUp({ time_zone: "Asia/Shanghai" });
    sandbox.write("config/config.json", { providers: [{ id: "notice", time_zone: "Asia/Tokyo" }, "line"], auto_detect: false, quiet_seconds: 0.3 });
    await failsOver(open({ NOTICE_TEXT: "已达到 5 小时的使用上限。您的限额将在 2027-01-05 09:00:00 重置。" }));
    expect(ofType("candidate")[0]).toMatchObject({ reset_at: "2027-01-05T00:01:00.000Z", zone: "Asia/Tokyo" });
  });

  it("reads it in the user's zone when neither names one", async () => {
    setUp();
    await failsOver(open({ NOTICE_TEXT: "已达到 5 小时的使用上限。您的限额将在 2027-01-05 09:00:00 重置。" }));
    expect(ofType("candidate")[0]).toMatchObject({ reset_at: "2027-01-05T08:01:00.000Z", zone: "Europe/Berlin" });
  });

  it("refuses a time_zone that is no zone, naming the file and the place", async () => {
    setUp();
    sandbox.write("config/config.json", { providers: [{ id: "notice", time_zone: "China/Beijing" }, "line"], auto_detect: false });
    const run = await sandbox.run(["providers", "list"]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain("/providers/0/time_zone");
    expect(run.stderr).toContain("is not a time zone this system knows");
    expect(run.stderr).toContain('an IANA time zone name, such as "Asia/Shanghai" or "Europe/Berlin"');
  });
});

describe("rate-limit wrappers", () => {
  const wrapper = (inner: string, type: string): string =>
    `API Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Upstream provider returned HTTP 429. Please retry shortly.\\n\\nUpstream error:\\n{\\"message\\":\\"${inner}\\",\\"type\\":\\"${type}\\"}"}}`;

  it("moves on when the inner message says the balance is gone", async () => {
    setUp();
    await failsOver(open({ NOTICE_TEXT: wrapper("Your account org-abe22bdc250a43e5aedea6db962a5dda is suspended due to insufficient balance, please recharge your account or check your plan and billing details", "exceeded_current_quota_error") }));
    expect(ofType("limit")).toHaveLength(1);
  });

  it("leaves the agent running when the inner message is a throttle per minute", async () => {
    setUp();
    const notice = wrapper("Your account org-abe22bdc250a43e5aedea6db962a5dda request reached organization max RPM: 20, please try again after 1 seconds", "rate_limit_reached_error");
    const terminal = open({ NOTICE_TEXT: notice });
    await terminal.waitFor("notice agent ready");
    await staysOn(terminal, notice);
  });
});
