import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import { installAgents } from "./agents.js";
import { bin, makeSandbox, waitFor } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

const sandbox = makeSandbox();
installAgents(sandbox, ["line"]);
afterAll(() => sandbox.cleanup());

const sessionCount = (): number => {
  try {
    return readdirSync(join(sandbox.data, "sessions")).length;
  } catch {
    return 0;
  }
};

describe("the session journal", () => {
  it("survives kill -9 of uuldana at random moments: every line of every journal parses", async () => {
    let seed = 424242;
    const random = (): number => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32);
    for (let trial = 0; trial < 100; trial++) {
      const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: sandbox.env });
      // the moments of a session's life, from its journal's first line on (a kill before it leaves no session)
      await waitFor(() => sessionCount() > trial, "the session's journal", 15_000);
      const killAt = Date.now() + random() * 700;
      let typed = false;
      while (Date.now() < killAt) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        if (!typed && terminal.raw.includes("line agent ready")) {
          terminal.type(`request ${trial}\r`);
          typed = true;
        }
      }
      process.kill(terminal.child.pid, "SIGKILL");
      terminal.kill();
      await terminal.exited;
    }
    const sessions = readdirSync(join(sandbox.data, "sessions"));
    expect(sessions.length).toBe(100);
    let events = 0;
    for (const id of sessions) {
      const lines = readFileSync(join(sandbox.data, "sessions", id, "journal.jsonl"), "utf8").split("\n");
      const last = lines.pop();
      expect(last === "" || last === undefined).toBe(true);
      for (const line of lines) {
        const event = JSON.parse(line);
        expect(typeof event.type).toBe("string");
        events++;
      }
      expect(JSON.parse(lines[0]!).type).toBe("session-start");
    }
    expect(events).toBeGreaterThan(200);
    // and the history reads: every one of them lists as a session whose uuldana is gone
    const listed = await sandbox.run(["sessions", "--json"]);
    expect(listed.code).toBe(0);
    expect(new Set(JSON.parse(listed.stdout).map((session: { state: string }) => session.state))).toEqual(new Set(["interrupted"]));
  }, 240_000);
});
