import { readFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { EXIT, installAgents } from "./agents.js";
import { avoidResting, exhaustedModel, mentions, switchTarget } from "../core/session/model-switch.js";
import type { Manifest } from "../core/registry/types.js";
import { bin, fixtures, LIMIT_RESET, linkAgent, makeSandbox, root, sessionJournals, standInManifest, waitFor, type JournalLine, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

// switch_models: at a limit of one model, another model of the same agent first; the failover only when the switch
// does not take. The model that ran out rests on its own, and a later run starts on another.

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];
const REQUEST = "please add a test for the lexer";
const CONTINUE = "You now run on sonnet. Please continue with the last request where you left off.";

beforeEach(() => {
  sandbox = makeSandbox();
  installAgents(sandbox, ["line"]);
  linkAgent(sandbox, "model", "model-agent.mjs");
  sandbox.write(
    "config/providers/model.json",
    standInManifest("model", {
      exit: EXIT,
      models: { names: ["opus", "sonnet", "haiku"], flag: "--model", switch_keys: ["/model {model}", "{enter}"], switch_to: ["sonnet", "haiku"] },
    }),
  );
  sandbox.write("config/config.json", { providers: [{ id: "model", switch_models: true }, "line"], auto_detect: false, quiet_seconds: 0.3, receiver_seconds: 2 });
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

function open(env: Record<string, string> = {}): TestTerminal {
  const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: { ...sandbox.env, TZ: "Europe/Berlin", MODEL_SPENT: "opus", ...env }, cols: 200 });
  terminals.push(terminal);
  return terminal;
}

function journal(): JournalLine[] {
  return sessionJournals(sandbox.data).flat();
}

describe("switching model in place at a per-model limit", () => {
  it("switches, confirms on the screen and by the answer, rests only that model, and starts the next run on another", async () => {
    const terminal = open();
    await terminal.waitFor("model agent ready on opus");
    terminal.type(`${REQUEST}\r`);
    await terminal.waitFor(`● (sonnet) I answered: ${CONTINUE}`, 20_000);
    expect(terminal.raw).toContain("Set model to Sonnet");
    expect(terminal.raw).not.toContain("line agent ready");
    await waitFor(() => journal().some((event) => event.type === "cooldown" && event.entry === "model@opus"), "the model's rest");
    const events = journal();
    expect(events.find((event) => event.type === "switched")).toMatchObject({ entry: "model", from: "opus", to: "sonnet", reset_at: LIMIT_RESET.iso });
    expect(events.some((event) => event.type === "limit")).toBe(false);

    const cooldowns = JSON.parse((await sandbox.run(["cooldowns", "--json"])).stdout) as Record<string, unknown>[];
    expect(cooldowns).toEqual([
      { entry: "model@opus", account: "model", until: LIMIT_RESET.iso, since: expect.any(String), source: "inferred", kind: "per-model", text: `You've hit your Opus limit · resets ${LIMIT_RESET.text}`, model: "opus" },
    ]);
    const listed = JSON.parse((await sandbox.run(["providers", "list", "--json"])).stdout) as Record<string, unknown>[];
    expect(listed.find((row) => row.entry === "model")).toMatchObject({ resting_until: null, eligible: true, resting_models: [{ model: "opus", until: LIMIT_RESET.iso }] });

    // the agent goes on: a later limit of its new model is a limit like any other
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
    const screen = await terminal.waitFor("rests until");
    expect(screen).toContain(`uuldana: model switched from opus to sonnet at the opus model's limit; opus rests until ${LIMIT_RESET.shown}`);

    // a later run of the entry avoids the model that rests
    const again = open();
    await again.waitFor("model agent ready on sonnet");
    expect(again.raw).toContain(`args: ["--ask","--model","sonnet"]`);
    again.type("/exit\r");
    await again.exited;
  });

  it("fails over when the agent is refused again on the new model, with the reason journaled", async () => {
    const terminal = open({ MODEL_REFUSE: "sonnet" });
    await terminal.waitFor("model agent ready on opus");
    terminal.type(`${REQUEST}\r`);
    await terminal.waitFor("line agent ready", 20_000);
    const prompt = JSON.parse(/line agent ready; args: (\[.*\]); LEVEL_ENV/.exec(terminal.raw.replace(/\r?\n/g, " "))![1]!)[2] as string;
    expect(prompt).toContain(REQUEST);
    terminal.type("/exit\r");
    await terminal.exited;
    const events = journal();
    expect(events.find((event) => event.type === "switch-failed")).toMatchObject({
      entry: "model",
      from: "opus",
      to: "sonnet",
      reason: `it was refused again on sonnet: You've hit your Opus limit · resets ${LIMIT_RESET.text}`,
    });
    expect(events.find((event) => event.type === "limit")).toMatchObject({ entry: "model", kind: "per-model" });
  });

  it("fails over when the agent's screen never names the new model", async () => {
    const terminal = open({ MODEL_SWITCH: "ignore" });
    await terminal.waitFor("model agent ready on opus");
    terminal.type(`${REQUEST}\r`);
    await terminal.waitFor("line agent ready", 20_000);
    terminal.type("/exit\r");
    await terminal.exited;
    expect(journal().find((event) => event.type === "switch-failed")).toMatchObject({ reason: "its screen did not name sonnet within 2 s of the switch keys" });
  });

  it("does not switch unless the entry asks for it", async () => {
    sandbox.write("config/config.json", { providers: ["model", "line"], auto_detect: false, quiet_seconds: 0.3 });
    const terminal = open();
    await terminal.waitFor("model agent ready on opus");
    terminal.type(`${REQUEST}\r`);
    await terminal.waitFor("line agent ready", 20_000);
    expect(terminal.raw).not.toContain("Set model to");
    terminal.type("/exit\r");
    await terminal.exited;
    expect(journal().some((event) => event.type === "switch")).toBe(false);
  });
});

describe("reading a per-model limit and a switch off the real agents' screens", () => {
  const manifest = (id: string): Manifest => JSON.parse(readFileSync(join(root, "manifests", `${id}.json`), "utf8")) as Manifest;
  const screen = (file: string): string => readFileSync(join(fixtures, "screens", file), "utf8");

  it.each([
    ["gemini/0.61.0-limit-switch-offered.txt", "gemini", undefined, "gemini-3.8-flash", "gemini-2.5-flash"],
    ["gemini/0.61.0-limit-pro-switch-offered.txt", "gemini", undefined, "pro", "gemini-2.5-flash"],
    ["gemini/0.61.0-limit-pro-switch-offered.txt", "gemini", "gemini-2.5-pro", "gemini-2.5-pro", "gemini-2.5-flash"],
    ["gemini/0.61.0-limit-flash.txt", "gemini", "gemini-2.5-flash", "gemini-2.5-flash", "gemini-3-flash-preview"],
  ])("%s (%s, started on %s): the model that ran out and the one to switch to", (file, id, current, spent, next) => {
    // the limit message as the reader cuts it out: its line, not the dialog's options under it
    const text = screen(file).split("\n").find((line) => /Usage limit reached/.test(line))!;
    expect(exhaustedModel(text, manifest(id), current)).toBe(spent);
    expect(switchTarget(manifest(id), spent, new Set())).toBe(next);
  });

  it.each([
    ["gemini/0.61.0-model-set.txt", "gemini-2.5-pro"],
    ["gemini/0.61.0-switched.txt", "gemini-2.5-pro"],
    ["claude-code/2.1.332-model-switched.txt", "sonnet"],
  ])("%s names the new model %s", (file, model) => {
    expect(screen(file).split("\n").some((line) => mentions(line, model))).toBe(true);
  });

  it("does not take a longer name, or a version, for a model", () => {
    expect(mentions("Usage limit reached for gemini-2.5-pro-preview.", "gemini-2.5-pro")).toBe(false);
    expect(mentions("the prompt was long", "pro")).toBe(false);
    expect(mentions("You've hit your Opus limit", "opus")).toBe(true);
  });

  it("points a later run away from a resting model, and leaves other arguments alone", () => {
    const gemini = manifest("gemini");
    expect(avoidResting(["--skip-trust", "--model", "gemini-2.5-pro"], gemini, new Set(["gemini-2.5-pro"]))).toEqual({ args: ["--skip-trust", "--model", "gemini-2.5-flash"], model: "gemini-2.5-flash" });
    expect(avoidResting(["--model=gemini-2.5-pro"], gemini, new Set(["gemini-2.5-pro"]))).toEqual({ args: ["--model=gemini-2.5-flash"], model: "gemini-2.5-flash" });
    expect(avoidResting(["--skip-trust"], gemini, new Set(["pro"]))).toEqual({ args: ["--skip-trust", "--model", "gemini-2.5-flash"], model: "gemini-2.5-flash" });
    expect(avoidResting(["--model", "gemini-2.5-flash"], gemini, new Set(["pro"]))).toEqual({ args: ["--model", "gemini-2.5-flash"], model: undefined });
    expect(avoidResting(["--skip-trust"], gemini, new Set())).toEqual({ args: ["--skip-trust"], model: undefined });
  });
});
