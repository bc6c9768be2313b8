import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Writable } from "node:stream";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { startRun, type HostOptions, type Run } from "../core/host/host.js";
import type { DetectorEvent } from "../core/reader/detector.js";
import { classifyText } from "../core/reader/reader.js";
import { AGENTS, EXIT } from "./agents.js";
import { fixtures, isAlive, LIMIT_RESET, makeSandbox, waitFor, type Sandbox } from "./helpers.js";

let sandbox: Sandbox;
const runs: Run[] = [];

beforeEach(() => {
  sandbox = makeSandbox();
});
afterEach(async () => {
  for (const run of runs.splice(0)) {
    run.agent.signal("SIGKILL");
    await run.result;
  }
  sandbox.cleanup();
});

// Runs a stand-in agent through the host with plain streams for stdin and stdout (no terminal).
function start(id: keyof typeof AGENTS, options: Partial<HostOptions> = {}): { run: Run; input: PassThrough; output: () => string } {
  const input = new PassThrough();
  let written = "";
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written += chunk.toString("utf8");
      done();
    },
  });
  const run = startRun({
    file: join(fixtures, "agents", AGENTS[id]!),
    args: [],
    env: { ...sandbox.env, PID_FILE: join(sandbox.dir, "pids") } as Record<string, string>,
    cwd: sandbox.project,
    entry: id,
    level: "ask",
    exit: EXIT,
    commandKey: "ctrl-]",
    stdin: input as unknown as NodeJS.ReadStream,
    stdout: output as unknown as NodeJS.WriteStream,
    ...options,
  });
  runs.push(run);
  return { run, input, output: () => written };
}

async function screenShows(run: Run, text: string): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { visible } = await run.screen.read();
    if (visible.join("\n").includes(text)) return visible;
    if (Date.now() > deadline) throw new Error(`timed out waiting for "${text}" on the screen:\n${visible.join("\n")}`);
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
}

function pids(): number[] {
  return readFileSync(join(sandbox.dir, "pids"), "utf8")
    .trim()
    .split("\n")
    .map((line) => Number(line.split(" ")[1]));
}

describe("graceful stop", () => {
  it.each([
    ["line", "keys", {}],
    ["keys", "SIGTERM", {}],
    ["term", "SIGKILL", {}],
    ["relaunch", "keys", {}],
    ["relaunch", "SIGTERM", { keys: ["{escape}"] }],
  ] as const)("stops the %s agent at step %s and leaves no process of the run", async (id, step, exit) => {
    const ready = { line: "line agent ready", keys: "stubborn ready", term: "very stubborn ready", relaunch: "child ready" }[id];
    const { run } = start(id, { exit: { ...EXIT, ...exit } });
    await screenShows(run, ready);
    const stop = await run.stop();
    expect(stop.step).toBe(step);
    await run.result;
    const started = pids();
    expect(started.length).toBe(id === "relaunch" ? 2 : 1);
    await waitFor(() => started.every((pid) => !isAlive(pid)), "every process of the run to end");
  });

  it("reports an agent that had already exited", async () => {
    const { run, input } = start("line");
    await screenShows(run, "line agent ready");
    input.write("exit 0\n");
    const result = await run.result;
    expect(result.exitCode).toBe(0);
    expect((await run.stop()).step).toBe("exited");
  });
});

describe("typed prompts", () => {
  it.each([
    ["with bracketed paste", {}, "received (pasted): continue the work on the parser"],
    ["without bracketed paste", { TYPED_PASTE: "off" }, "received: continue the work on the parser"],
  ])("types the prompt once the agent is ready, %s, and presses Enter on its own", async (_, env, shown) => {
    const { run } = start("typed", {
      env: { ...sandbox.env, ...env } as Record<string, string>,
      typedPrompt: { text: "continue the work\non the parser", ready: (screen) => /ready>$/m.test(screen.join("\n")) },
    });
    const visible = await screenShows(run, "received");
    expect(visible.find((line) => line.startsWith("received"))).toBe(shown);
    run.agent.write("/exit\r");
    const result = await run.result;
    expect(result.typedPrompt).toEqual({ ok: true, retriedEnter: false });
  });

  it("says why when the agent never gets ready", async () => {
    const { run } = start("line", { typedPrompt: { text: "hello", ready: (screen) => screen.includes("never shown") } });
    await screenShows(run, "line agent ready");
    run.agent.write("exit 0\r");
    const result = await run.result;
    expect(result.typedPrompt).toEqual({ ok: false, retriedEnter: false, reason: "the agent exited before it was ready" });
  });
});

describe("the conversation of a run", () => {
  it("is kept for a full-screen agent whose lines scroll through the alternate screen", async () => {
    const { run, input } = start("screen");
    await screenShows(run, "SCREEN AGENT");
    input.write("s");
    await screenShows(run, "line 30 of the story");
    input.write("q");
    const lines = (await run.result).conversation.split("\n");
    const story = lines.filter((line) => line.includes("of the story"));
    expect(story).toEqual(Array.from({ length: 30 }, (_, i) => `line ${String(i + 1).padStart(2, "0")} of the story`));
    expect(lines.filter((line) => line === "SCREEN AGENT")).toHaveLength(1);
  });

  it("passes every byte of output through while the screen model reads it", async () => {
    const { run, output } = start("fast");
    const result = await run.result;
    expect(result.exitCode).toBe(4);
    expect(output()).toContain("FINAL LINE: all written");
    expect(result.conversation.split("\n").at(-1)).toBe("FINAL LINE: all written");
    expect(result.conversation.split("\n")).toHaveLength(201);
  });
});

describe("reading the agent's screen for a gone allowance", () => {
  const detect = { quietSeconds: 0.4, dismissSeconds: 2, classify: (text: string) => classifyText(text, { now: LIMIT_RESET.from, timeZone: "Europe/Berlin" }) };

  it.each([
    ["banner", "stop", "quiet"],
    ["fail", "stop", "failing exit"],
    ["keep-working", "dismissed", undefined],
  ] as const)("LIMIT_MODE=%s ends in %s", async (mode, type, after) => {
    const events: string[] = [];
    const { run } = start("limit", {
      env: { ...sandbox.env, LIMIT_MODE: mode, WORK_SECONDS: "5" } as Record<string, string>,
      // the failing exit comes 100 ms after the text, and the work every 100 ms: quiets far longer than that, so a
      // loaded machine that is slow to tell of the exit, or stalls the work, does not turn either into a quiet stop
      detect: mode === "fail" ? { ...detect, quietSeconds: 5, dismissSeconds: 10 } : mode === "keep-working" ? { ...detect, quietSeconds: 1, dismissSeconds: 3 } : detect,
      onDetection: (event) => events.push(event.type),
    });
    if (mode === "fail") {
      const result = await run.result;
      expect(result.detection).toMatchObject({ type, after });
    } else {
      await waitFor(() => events.includes(type), `the ${type} event`, 10_000);
      run.agent.write("/exit\r");
      const result = await run.result;
      expect(events[0]).toBe("candidate");
      if (type === "stop") expect(result.detection).toMatchObject({ type: "stop", after, text: LIMIT_RESET.message });
      if (type === "stop") expect(result.detection?.type === "stop" && result.detection.verdict.reset_at).toBe(LIMIT_RESET.iso);
    }
  });

  // After the limit text, what the agent keeps drawing decides: work keeps it (the text is dismissed after
  // dismissSeconds), a redraw that only changes digits in place does not (a stop after quietSeconds). The working
  // stand-ins draw every 100 ms: their quiet is a second, so a loaded machine that stalls one for a few hundred
  // milliseconds does not make a stop of it.
  it.each([
    ["spinner", "a braille spinner with a running timer on the cursor's row", "dismissed"],
    ["timer", "a dingbat spinner, a gerund and a timer, redrawn under the text", "dismissed"],
    ["elapsed", "a fixed bullet, a gerund and a timer: only its digits change", "dismissed"],
    ["steps", "progress lines that differ only in their number", "dismissed"],
    ["alt-steps", "the same lines in a scroll region on the alternate screen", "dismissed"],
    ["clock", "an idle clock in the bottom row", "stop"],
    ["busy", "a busy line nothing tells apart from quiet", "stop"],
  ] as const)("LIMIT_MODE=%s (%s) ends in %s", async (mode, _what, type) => {
    const events: DetectorEvent[] = [];
    const timing = type === "dismissed" ? { ...detect, quietSeconds: 1, dismissSeconds: 3 } : detect;
    const { run } = start("limit", {
      env: { ...sandbox.env, LIMIT_MODE: mode, WORK_SECONDS: "6" } as Record<string, string>,
      detect: timing,
      onDetection: (event) => events.push(event),
    });
    await waitFor(() => events.some((event) => event.type === "stop" || event.type === "dismissed"), "a stop or a dismissal", 10_000);
    run.agent.write("/exit\r");
    const result = await run.result;
    expect(events.map((event) => event.type)).toEqual(["candidate", type]);
    expect(events.map((event) => event.text)).toEqual([LIMIT_RESET.message, LIMIT_RESET.message]);
    const waited = events[1]!.at - events[0]!.at;
    if (type === "dismissed") expect(waited).toBeGreaterThanOrEqual(timing.dismissSeconds * 1000);
    else expect(result.detection).toMatchObject({ type: "stop", after: "quiet", text: LIMIT_RESET.message });
    if (type === "stop") expect(waited).toBeLessThan(timing.dismissSeconds * 1000);
  });

  it("keeps a session the provider's busy test says is working, though its screen looks quiet", async () => {
    const events: DetectorEvent[] = [];
    const screens: string[][] = [];
    const busy = (screen: readonly string[]): boolean => {
      screens.push([...screen]);
      return screen.some((line) => line.endsWith("press esc to cancel"));
    };
    const { run } = start("limit", {
      env: { ...sandbox.env, LIMIT_MODE: "busy" } as Record<string, string>,
      detect: { ...detect, busy },
      onDetection: (event) => events.push(event),
    });
    await waitFor(() => events.some((event) => event.type === "stop" || event.type === "dismissed"), "a stop or a dismissal", 10_000);
    run.agent.write("/exit\r");
    await run.result;
    expect(events.map((event) => event.type)).toEqual(["candidate", "dismissed"]);
    expect(events[1]!.at - events[0]!.at).toBeGreaterThanOrEqual(detect.dismissSeconds * 1000);
    // asked with the visible rows, about once a quiet period
    expect(screens[0]).toContain("◆ running the test suite · press esc to cancel");
    expect(screens.length).toBeGreaterThanOrEqual(2);
    expect(screens.length).toBeLessThanOrEqual(Math.ceil(detect.dismissSeconds / detect.quietSeconds));
  });

  it("does nothing about a warning", async () => {
    const events: string[] = [];
    const { run } = start("limit", { env: { ...sandbox.env, LIMIT_MODE: "warning" } as Record<string, string>, detect, onDetection: (e) => events.push(e.type) });
    await screenShows(run, "You've used 85%");
    await new Promise((resolve) => setTimeout(resolve, 800));
    run.agent.write("/exit\r");
    const result = await run.result;
    expect(events).toEqual([]);
    expect(result.detection).toBeUndefined();
  });
});
