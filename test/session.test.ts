import { PassThrough, Writable } from "node:stream";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { stripEscapes } from "../core/base/ansi.js";
import { loadContext } from "../core/config/context.js";
import type { SessionEvent, SessionResult } from "../core/session/result.js";
import { runSession } from "../core/session/session.js";
import { installAgents } from "./agents.js";
import { LIMIT_RESET, makeSandbox, sessionJournals, waitFor, type Sandbox } from "./helpers.js";

let sandbox: Sandbox;
beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox);
  // the agents run with this process's environment, as they would with uuldana's
  process.env.LIMIT_RESET = LIMIT_RESET.text;
});
afterEach(() => sandbox.cleanup());

// A terminal for the session that is not a terminal: what the agents show is collected, and a line is typed once a
// cue has been shown.
function scriptedTerminal(cues: { cue: string; keys: string }[]): { terminal: { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream }; shown: () => string } {
  const keyboard = new PassThrough();
  let seen = "";
  let next = 0;
  const display = new Writable({
    write(chunk: Buffer, _encoding, done) {
      seen += stripEscapes(chunk.toString("utf8"));
      const step = cues[next];
      if (step && seen.includes(step.cue)) {
        next++;
        setTimeout(() => keyboard.write(step.keys), 100);
      }
      done();
    },
  });
  return { terminal: { stdin: keyboard as unknown as NodeJS.ReadStream, stdout: display as unknown as NodeJS.WriteStream }, shown: () => seen };
}

async function session(providers: unknown[], cues: { cue: string; keys: string }[], stop?: AbortSignal): Promise<{ result: SessionResult; events: SessionEvent[] }> {
  sandbox.write("config/config.json", { providers, auto_detect: false, quiet_seconds: 0.3 });
  const context = await loadContext({ env: sandbox.env, cwd: sandbox.project });
  const events: SessionEvent[] = [];
  const { terminal } = scriptedTerminal(cues);
  const result = await runSession(context, { agentArgs: [], terminal, stop, onEvent: (event) => events.push(event) });
  return { result, events };
}

describe("the session engine's result", () => {
  it("holds both runs of a failover as facts: how each started and ended, the limit and what the session did", async () => {
    const { result, events } = await session(["limit", "line"], [{ cue: "line agent ready", keys: "/exit\r" }]);
    expect(result).toMatchObject({ ending: "agent-exited", exitCode: 0, signal: undefined, nothingCanRun: undefined });
    expect(result.sessionId).toMatch(/^[0-9a-z]+$/);
    expect(result.runs).toHaveLength(2);
    const [first, second] = result.runs;
    expect(first).toMatchObject({
      entry: "limit",
      provider: "limit",
      name: "Stand-in limit",
      version: "1.0.0",
      level: "ask",
      start: "first",
      prompted: false,
      nativeResume: undefined,
      end: "stopped",
      exitCode: 0,
      signal: null,
      stoppedBy: "keys",
      failure: undefined,
      ignored: [],
      userTurns: 0,
    });
    expect(first!.limit).toMatchObject({ source: "inferred", kind: "weekly", resetAt: LIMIT_RESET.iso, text: LIMIT_RESET.message, after: "quiet", rested: true, action: "failover", why: undefined });
    expect(first!.limit!.restsUntil.toISOString()).toBe(LIMIT_RESET.iso);
    // nobody had spoken to the first agent: there was no conversation to hand on
    // nobody had spoken to the first agent: there was no conversation to hand on
    expect(second).toMatchObject({ entry: "line", start: "failover", prompted: false, end: "exited", exitCode: 0, signal: null, stoppedBy: null, limit: undefined, userTurns: 1 });
    expect(events.map((event) => `${event.type} ${"run" in event ? event.run.entry : ""}`)).toEqual(["run-starting limit", "run-ended limit", "run-starting line", "run-ended line"]);
    expect(events[2]).toMatchObject({ type: "run-starting", previous: { entry: "limit" }, commandKey: "ctrl-]" });
  });

  it("takes an account with no allowance, shown before any turn, for a failed start that rests the entry", async () => {
    const { result, events } = await session([{ id: "limit", env: { LIMIT_MODE: "account" } }, "line"], [{ cue: "line agent ready", keys: "/exit\r" }]);
    expect(result).toMatchObject({ ending: "agent-exited", exitCode: 0 });
    const [first, second] = result.runs;
    expect(first).toMatchObject({ entry: "limit", start: "first", end: "failed-start", failure: "its account has no allowance: Your subscription is inactive. Update your plan to continue using the agent.", userTurns: 0 });
    expect(first!.limit).toMatchObject({ kind: "account", resetAt: null, rested: true, action: "failover" });
    expect(second).toMatchObject({ entry: "line", start: "failover", end: "exited" });
    expect(events.map((event) => `${event.type} ${"run" in event ? event.run.entry : ""}`)).toEqual(["run-starting limit", "start-failed limit", "run-starting line", "run-ended line"]);
    // it rests cooldown_minutes: a second session does not try it again
    const again = await session([{ id: "limit", env: { LIMIT_MODE: "account" } }, "line"], [{ cue: "line agent ready", keys: "/exit\r" }]);
    expect(again.result.runs.map((run) => run.entry)).toEqual(["line"]);
  });

  it("says no entry can run, with each entry's reasons, when none is installed", async () => {
    const { result } = await session(["absent"], []);
    expect(result).toMatchObject({ ending: "no-entry", exitCode: 1, runs: [], signal: undefined });
    expect(result.nothingCanRun).toEqual({ ceiling: "ask", entries: [{ entry: "absent", reasons: ['unknown provider "absent": no valid manifest has this id'] }], firstReturn: undefined });
  });

  it("ends by the signal it was stopped with before any run starts", async () => {
    const stop = new AbortController();
    stop.abort("SIGTERM");
    const { result } = await session(["line"], [], stop.signal);
    expect(result).toMatchObject({ ending: "signal", exitCode: 143, signal: "SIGTERM", runs: [] });
  });

  it("keeps the agent running and says why when failover is off", async () => {
    sandbox.write("config/config.json", { providers: ["limit", "line"], auto_detect: false, quiet_seconds: 0.3, failover: false });
    const context = await loadContext({ env: sandbox.env, cwd: sandbox.project });
    const scripted = scriptedTerminal([]);
    const running = runSession(context, { agentArgs: [], terminal: scripted.terminal });
    // the limit is decided a moment after the banner: the agent is told to leave once it is left running
    const decided = (): boolean => {
      try {
        return sessionJournals(sandbox.data)[0]!.some((event) => event.type === "limit");
      } catch {
        return false;
      }
    };
    await waitFor(() => scripted.shown().includes("weekly limit") && decided(), "the limit in the journal");
    scripted.terminal.stdin.push("/exit\r");
    const result = await running;
    expect(result.runs).toHaveLength(1);
    expect(result.runs[0]).toMatchObject({ entry: "limit", end: "exited", exitCode: 0, stoppedBy: null });
    expect(result.runs[0]!.limit).toMatchObject({ action: "kept running", why: "failover is off," });
    expect(result).toMatchObject({ ending: "agent-exited", exitCode: 0 });
  });
});
