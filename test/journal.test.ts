import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { afterAll, describe, expect, it } from "vitest";

import { installAgents } from "./agents.js";
import { bin, makeSandbox, waitFor } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

const sandbox = makeSandbox();
installAgents(sandbox, ["line"]);
afterAll(() => sandbox.cleanup());

const sessions = (): string[] => {
  try {
    return readdirSync(join(sandbox.data, "sessions"));
  } catch {
    return [];
  }
};

// The lines a session's journal holds whole (a line being written when uuldana was killed is not one).
const wholeLines = (id: string): number => {
  try {
    return readFileSync(join(sandbox.data, "sessions", id, "journal.jsonl"), "utf8").split("\n").length - 1;
  } catch {
    return 0;
  }
};

describe("the session journal", () => {
  it("survives kill -9 of uuldana at random moments: every line of every journal parses", async () => {
    let seed = 424242;
    const random = (): number => ((seed = (seed * 1664525 + 1013904223) >>> 0) / 2 ** 32);
    // each session's id, with the lines its journal held whole just before the kill
    const killed = new Map<string, number>();
    for (let trial = 0; trial < 100; trial++) {
      const before = new Set(sessions());
      const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: sandbox.env });
      // the moment of a session's life, by what its journal holds (not by the clock, which a loaded machine
      // stretches): once its journal is there (with its first line), once its agent has started (the second), or
      // once the user's request is in (the third); then up to 100 ms more
      const stage = 1 + Math.floor(random() * 3);
      const extra = random() * 100;
      let id: string | undefined;
      let typed = false;
      const live = (): void => {
        id ??= sessions().find((session) => !before.has(session));
        if (!typed && terminal.raw.includes("line agent ready")) {
          terminal.type(`request ${trial}\r`);
          typed = true;
        }
      };
      const reached = (): boolean => {
        live();
        return id !== undefined && wholeLines(id) >= stage;
      };
      await waitFor(reached, `stage ${stage} of the session`, 20_000);
      const killAt = Date.now() + extra;
      while (Date.now() < killAt) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        live();
      }
      killed.set(id!, wholeLines(id!));
      process.kill(terminal.child.pid, "SIGKILL");
      terminal.kill();
      await terminal.exited;
    }
    expect(sessions().length).toBe(100);
    let events = 0;
    for (const id of sessions()) {
      const lines = readFileSync(join(sandbox.data, "sessions", id, "journal.jsonl"), "utf8").split("\n");
      const last = lines.pop();
      expect(last === "" || last === undefined).toBe(true);
      for (const line of lines) {
        const event = JSON.parse(line);
        expect(typeof event.type).toBe("string");
        events++;
      }
      expect(JSON.parse(lines[0]!).type).toBe("session-start");
      // no line it had written was lost
      expect(lines.length).toBeGreaterThanOrEqual(killed.get(id)!);
    }
    // the stages add up to 214 lines for this seed: the kills did not all come before the agent started
    expect(events).toBeGreaterThan(200);
    // and the history reads: every one of them lists as a session whose uuldana is gone
    const listed = await sandbox.run(["sessions", "--json"]);
    expect(listed.code).toBe(0);
    expect(new Set(JSON.parse(listed.stdout).map((session: { state: string }) => session.state))).toEqual(new Set(["interrupted"]));
  }, 600_000);
});
