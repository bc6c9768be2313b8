import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { EXIT, installAgents } from "./agents.js";
import { bin, handoffPreamble, linkAgent, makeSandbox, standInManifest, uuldanaLines, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// A drop-in provider with wording of its own, its manifest and adapter in the sandbox's config folder, run for real:
// the adapter's hooks decide through a session, in a pseudo-terminal.

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];

const WHEEL = `export default {
  classify(text) {
    return /hamster wheel has stopped/i.test(text) ? { stop: true, kind: "daily", reason: "the quirk agent says its wheel has stopped" } : undefined;
  },
};
`;

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox, ["line"]);
  linkAgent(sandbox, "quirk", "quirk-agent.mjs");
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

function dropIn(manifest: Record<string, unknown>, adapter?: string): void {
  sandbox.write("config/providers/quirk.json", standInManifest("quirk", { exit: EXIT, ...(adapter ? { adapter: "./quirk.mjs" } : {}), ...manifest }));
  if (adapter) sandbox.write("config/providers/quirk.mjs", adapter);
  sandbox.write("config/config.json", { providers: ["quirk", "line"], auto_detect: false, quiet_seconds: 0.3, dismiss_seconds: 1.5 });
}

function start(env: Record<string, string> = {}): TestTerminal {
  const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, ...env }, cols: 200 });
  terminals.push(terminal);
  return terminal;
}

function journal(): Record<string, unknown>[] {
  const folder = join(sandbox.data, "sessions", readdirSync(join(sandbox.data, "sessions"))[0]!);
  return readFileSync(join(folder, "journal.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
}


describe("a drop-in manifest with an adapter", () => {
  it("fails over on the adapter's own limit wording, and the next prompt has none of its chrome", async () => {
    // the general reader alone does not take this wording for a stop
    const alone = await sandbox.run(["explain", "--json", "The hamster wheel has stopped turning; it spins again tomorrow."]);
    expect(JSON.parse(alone.stdout)).toMatchObject({ stop: false });
    dropIn({ chrome: ["^~~ quirk footer"] }, WHEEL);
    const terminal = start();
    await terminal.waitFor("quirk agent ready");
    terminal.type("please tidy the docs\r");
    await terminal.waitFor("line agent ready", 20_000);
    const args = JSON.parse(/line agent ready; args: (\[.*\]); LEVEL_ENV/.exec(terminal.raw.replace(/\r?\n/g, " "))![1]!) as string[];
    terminal.type("/exit\r");
    await terminal.exited;
    expect(args[2]).toBe(
      [
        handoffPreamble("Stand-in quirk (quirk)", "please tidy the docs"),
        "",
        "--- Stand-in quirk (quirk), as its screen showed it ---",
        "quirk agent ready",
        "(the user's last request, quoted at the top)",
        "I looked at it: please tidy the docs.",
        "",
      ].join("\n"),
    );
    expect(journal().find((event) => event.type === "limit")).toMatchObject({ entry: "quirk", kind: "daily", text: "The hamster wheel has stopped turning; it spins again tomorrow." });
  });

  it("keeps a session through limit-like text while its busy pattern is drawn, and stops it without one", async () => {
    dropIn({ busy: ["^quirk is pondering \\d+$"] });
    const kept = start({ QUIRK_MODE: "busy", BUSY_SECONDS: "3" });
    await kept.waitFor("quirk agent ready");
    kept.type("think it over\r");
    await kept.waitFor("quirk has finished pondering", 10_000);
    kept.type("/exit\r");
    await kept.exited;
    expect(uuldanaLines(kept.raw)).toEqual([
      "uuldana: starting quirk (Stand-in quirk 1.0.0) at ask · ctrl-] opens uuldana's prompt",
      expect.stringMatching(/^uuldana: text like a usage limit was ignored at \d\d:\d\d: You've hit your daily limit · resets tomorrow at 9am$/),
      expect.stringMatching(/^uuldana: quirk \(Stand-in quirk\) exited with code 0 after \d+s$/),
    ]);
    sandbox.cleanup();
    sandbox = makeSandbox();
    installAgents(sandbox, ["line"]);
    linkAgent(sandbox, "quirk", "quirk-agent.mjs");
    // the same agent, drawing the same, with a manifest that does not say what its working line looks like
    dropIn({});
    const stopped = start({ QUIRK_MODE: "busy", BUSY_SECONDS: "3" });
    await stopped.waitFor("quirk agent ready");
    stopped.type("think it over\r");
    await stopped.waitFor("line agent ready", 20_000);
    stopped.type("/exit\r");
    await stopped.exited;
    expect(journal().find((event) => event.type === "limit")).toMatchObject({ entry: "quirk", kind: "daily", after: "quiet" });
    // the agent was stopped with its working line half drawn: uuldana's next line still begins a line of its own
    expect(uuldanaLines(stopped.raw)[1]).toMatch(/^uuldana: quirk's daily limit is gone; it rests until .* UTC; continuing with line /);
  });

  it("turns off a hook that throws and one that is too slow, says so once each, and the session carries on", async () => {
    dropIn(
      {},
      `let calls = 0;
export default {
  classify() {
    calls++;
    throw new Error("boom");
  },
  busy() {
    const until = Date.now() + 150;
    while (Date.now() < until) {}
    return false;
  },
};
`,
    );
    const terminal = start({ QUIRK_MODE: "banner" });
    await terminal.waitFor("quirk agent ready");
    terminal.type("go on\r");
    await terminal.waitFor("line agent ready", 20_000);
    terminal.type("/exit\r");
    await terminal.exited;
    const lines = uuldanaLines(terminal.raw);
    expect(lines.filter((line) => line.includes("hook"))).toEqual([
      'uuldana: provider "quirk": its classify hook threw (boom); uuldana carries on without it',
      expect.stringMatching(/^uuldana: provider "quirk": its busy hook took 1\d\d ms \(the budget is 50 ms\); uuldana carries on without it$/),
    ]);
    // the general reader still read the banner, and the session moved on
    expect(journal().filter((event) => event.type === "hook-off").map((event) => [event.hook, event.failure])).toEqual([
      ["classify", "threw"],
      ["busy", "slow"],
    ]);
    expect(lines.at(-1)).toMatch(/^uuldana: line \(Stand-in line\) exited with code 0 after \d+s$/);
  });
});
