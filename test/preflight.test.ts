import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, describe, expect, it } from "vitest";

import { recordQuota } from "../core/session/quota-store.js";
import { bin, fixtures, linkAgent, makeSandbox, standInManifest, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

const forbidNative = join(fixtures, "forbid-native.mjs");

let sandbox: Sandbox;
afterEach(() => sandbox?.cleanup());

// A sandbox whose priority list is these stand-ins (no others detected): each one's manifest, and the agent script
// linked under its name (none: not installed).
function setUp(agents: { id: string; script?: string; manifest?: Record<string, unknown> }[], config: Record<string, unknown> = {}): Sandbox {
  sandbox = makeSandbox();
  for (const agent of agents) {
    sandbox.write(`config/providers/${agent.id}.json`, standInManifest(agent.id, agent.manifest));
    if (agent.script) linkAgent(sandbox, agent.id, agent.script);
  }
  sandbox.write("config/config.json", { providers: agents.map((agent) => agent.id), auto_detect: false, ...config });
  return sandbox;
}

// "2026-12-02 05:00 UTC", as uuldana shows an instant
function shown(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

// The lines of a ready stand-in "alpha" (line-agent.mjs, the stand-in manifest) under the ceiling ask.
function readyAlpha(path: string, flags = "--ask"): string {
  return [
    "alpha (Stand-in alpha): ready",
    `  ✓ installed  ${path}/alpha`,
    '  ✓ version    1.0.0, "alpha --version" matched its version pattern',
    "  ✓ signed-in  not checked: its manifest does not say how to tell",
    `  ✓ flags      "alpha --help" lists ${flags}`,
    "  ✓ level      ask, the highest level it enforces within the ceiling ask",
    "  ✓ prompt     argv: the first prompt is its last argument",
    "  ✓ quota      no native source: its limits are read from its screen only",
    "  ✓ resting    not resting",
    "",
  ].join("\n");
}

describe("uuldana preflight", () => {
  it("says on a terminal what it is doing while a CLI is slow to answer, and erases the line after", async () => {
    setUp([{ id: "slow", script: "slow-help.sh" }]);
    const terminal = new TestTerminal(process.execPath, [bin, "preflight"], { cwd: sandbox.project, env: sandbox.env, cols: 120 });
    try {
      expect((await terminal.waitFor("uuldana: checking each entry"))[0]).toBe("uuldana: checking each entry (its CLI's version and --help)…");
      expect((await terminal.exited).exitCode).toBe(0);
      await terminal.settle();
      const screen = terminal.screen().filter((line) => line !== "");
      expect(screen[0]).toBe("slow (Stand-in slow): ready");
      expect(screen.join("\n")).not.toContain("checking");
      expect(terminal.raw).toContain("uuldana: checking each entry (its CLI's version and --help)…\r\x1b[2K");
    } finally {
      terminal.kill();
    }
  });

  it("says each check of a ready entry and exits 0; its --help is asked once, outside the project, then cached", async () => {
    setUp([{ id: "alpha", script: "line-agent.mjs", manifest: { models: { flag: "--model" }, session_id: { args: ["--session-id", "{id}"] } } }]);
    const log = join(sandbox.dir, "help.log");
    const first = await sandbox.run(["preflight", "alpha"], { env: { HELP_LOG: log } });
    expect(first).toEqual({
      code: 0,
      stdout: readyAlpha(sandbox.path, "--ask, --session-id, --model"),
      stderr: "",
    });
    const second = await sandbox.run(["preflight", "alpha"], { env: { HELP_LOG: log } });
    expect(second).toEqual(first);
    const asked = readFileSync(log, "utf8").trim().split("\n");
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/^alpha --help in \S+\/uuldana-help-\w+$/);
    expect(asked[0]).not.toContain(sandbox.project);
  });

  it("names each flag of the level that the CLI's --help does not list, with the manifest field it comes from", async () => {
    setUp([{ id: "beta", script: "line-agent.mjs", manifest: { args: ["--quiet"], prompt: { mode: "flag", flag: "--prompt" } } }]);
    const run = await sandbox.run(["preflight", "beta"]);
    expect(run.code).toBe(1);
    expect(run.stdout.split("\n").slice(0, 7)).toEqual([
      "beta (Stand-in beta): not ready",
      `  ✓ installed  ${sandbox.path}/beta`,
      '  ✓ version    1.0.0, "beta --version" matched its version pattern',
      "  ✓ signed-in  not checked: its manifest does not say how to tell",
      '  ✗ flags      "beta --help" does not list --quiet (args), --prompt (prompt.flag)',
      "  ✓ level      ask, the highest level it enforces within the ceiling ask",
      "  ✓ prompt     flag: the first prompt is given with --prompt",
    ]);
  });

  it("fails the flags check of a CLI that cannot print its help, saying what it did", async () => {
    setUp([{ id: "delta", script: "fast-exit.mjs" }]);
    const run = await sandbox.run(["preflight", "delta", "--json"]);
    expect(run.code).toBe(1);
    const [entry] = JSON.parse(run.stdout) as { checks: { name: string; ok: boolean; detail: string }[] }[];
    expect(entry!.checks[3]).toEqual({ name: "flags", ok: false, detail: `"delta --help" printed "row 001 ${"x".repeat(49)}..." and exited with 4` });
  });

  it("says an entry that is not installed is not ready, and checks nothing it cannot", async () => {
    setUp([{ id: "gamma" }]);
    const run = await sandbox.run(["preflight", "gamma"]);
    expect(run).toEqual({
      code: 1,
      stdout: [
        "gamma (Stand-in gamma): not ready",
        "  ✗ installed  no gamma on PATH",
        "  ✗ version    not checked: not installed",
        "  ✗ signed-in  not checked: not installed",
        "  ✗ flags      not checked: not installed",
        "  ✓ level      ask, the highest level it enforces within the ceiling ask",
        "  ✓ prompt     argv: the first prompt is its last argument",
        "  ✓ quota      no native source: its limits are read from its screen only",
        "  ✓ resting    not resting",
        "",
      ].join("\n"),
      stderr: "",
    });
  });

  it("refuses an entry whose levels all lie above the ceiling, and one that takes no first prompt", async () => {
    setUp([
      { id: "high", script: "line-agent.mjs", manifest: { levels: { "full-access": { args: ["--yolo"] } }, models: { flag: "-m" } } },
      { id: "mute", script: "line-agent.mjs", manifest: { prompt: { mode: "none" } } },
    ]);
    const run = await sandbox.run(["preflight"]);
    expect(run.code).toBe(1);
    const lines = run.stdout.split("\n");
    expect(lines.filter((line) => /^\S/.test(line))).toEqual(["high (Stand-in high): not ready", "mute (Stand-in mute): not ready"]);
    expect(lines).toContain('  ✓ flags      "high --help" lists -m (it has no level to run at, so no level\'s flags)');
    expect(lines).toContain('  ✗ level      refused: cannot run within the ceiling "ask" (it enforces only full-access)');
    expect(lines).toContain("  ✗ prompt     none: takes no first prompt, so it cannot continue a conversation");
    expect(lines.filter((line) => line.startsWith("  ✗"))).toHaveLength(2);
  });

  it("says until when a resting entry rests", async () => {
    setUp([{ id: "alpha", script: "line-agent.mjs" }]);
    const until = new Date(Date.now() + 3 * 3_600_000);
    sandbox.write("data/cooldowns.json", { version: 1, entries: { alpha: { until: until.toISOString(), since: null, source: "inferred", kind: "session", text: null } } });
    const run = await sandbox.run(["preflight", "alpha"]);
    expect(run.code).toBe(1);
    expect(run.stdout.split("\n")[0]).toBe("alpha (Stand-in alpha): not ready");
    expect(run.stdout.split("\n")[8]).toBe(`  ✗ resting    resting until ${shown(until)}, 3 hours from now`);
  });

  it("names the native quota source and the last reading: its least share left and its age", async () => {
    setUp([{ id: "alpha", script: "line-agent.mjs", manifest: { quota: { source: "rollout" }, adapter: "alpha-adapter.mjs" } }]);
    sandbox.write("config/providers/alpha-adapter.mjs", "export default { quotaFiles: () => [], quota: () => undefined };\n");
    const quotaLine = async (): Promise<string> => (await sandbox.run(["preflight", "alpha"])).stdout.split("\n")[7]!;
    expect(await quotaLine()).toBe("  ✓ quota      rollout, read by its adapter: no reading yet");
    const at = new Date(Date.now() - 4 * 60_000);
    recordQuota(sandbox.data, {
      entry: "alpha",
      at,
      source: "rollout",
      windows: [
        { name: "primary", usedPercent: 97, windowMinutes: 300, resetsAt: new Date(Date.now() + 3_600_000) },
        { name: "secondary", usedPercent: 40, windowMinutes: 10080 },
      ],
    });
    expect(await quotaLine()).toBe("  ✓ quota      rollout, read by its adapter: 5-hour window 3% left, read 4 minutes ago");
    // the agent's own account says the allowance is gone until a reset still ahead
    const reset = new Date(Date.now() + 2 * 3_600_000);
    recordQuota(sandbox.data, { entry: "alpha", at, source: "rollout", windows: [{ name: "five_hour", usedPercent: 100, resetsAt: reset }] });
    const gone = await sandbox.run(["preflight", "alpha"]);
    expect(gone.code).toBe(1);
    expect(gone.stdout.split("\n")[7]).toBe(`  ✗ quota      rollout, read by its adapter: five-hour window 0% left until ${shown(reset)}, read 4 minutes ago`);
  });

  it("fails the quota check of an entry whose adapter will not load, and says a source without quota hooks", async () => {
    setUp([
      { id: "broken", script: "line-agent.mjs", manifest: { adapter: "broken-adapter.mjs" } },
      { id: "plain", script: "line-agent.mjs", manifest: { quota: { source: "statusline" } } },
    ]);
    sandbox.write("config/providers/broken-adapter.mjs", 'throw new Error("no quota here");\n');
    const run = await sandbox.run(["preflight", "--json"]);
    const checks = (JSON.parse(run.stdout) as { checks: { name: string; ok: boolean; detail: string }[] }[]).map((entry) => entry.checks[6]);
    expect(checks).toEqual([
      { name: "quota", ok: false, detail: 'the adapter of provider "broken" will not load: loading it threw an error (no quota here)' },
      { name: "quota", ok: true, detail: "statusline, named by its manifest, but it has no adapter to read it: no reading yet" },
    ]);
  });

  it("checks every entry of the priority list when none is named, and only the one named otherwise", async () => {
    setUp([
      { id: "alpha", script: "line-agent.mjs" },
      { id: "beta", script: "line-agent.mjs", manifest: { args: ["--quiet"] } },
    ]);
    const every = await sandbox.run(["preflight"]);
    expect(every.code).toBe(1);
    expect(every.stdout.startsWith(`${readyAlpha(sandbox.path)}\nbeta (Stand-in beta): not ready\n`)).toBe(true);
    expect(await sandbox.run(["preflight", "alpha"])).toEqual({ code: 0, stdout: readyAlpha(sandbox.path), stderr: "" });

    const json = await sandbox.run(["preflight", "--json"]);
    expect(json.code).toBe(1);
    const entries = JSON.parse(json.stdout) as { entry: string; provider: string; ready: boolean; checks: { name: string; ok: boolean }[] }[];
    expect(entries.map(({ entry, provider, ready }) => ({ entry, provider, ready }))).toEqual([
      { entry: "alpha", provider: "alpha", ready: true },
      { entry: "beta", provider: "beta", ready: false },
    ]);
    for (const entry of entries) expect(entry.checks.map((check) => check.name)).toEqual(["installed", "version", "signed-in", "flags", "level", "prompt", "quota", "resting"]);
    expect(entries[1]!.checks.filter((check) => !check.ok).map((check) => check.name)).toEqual(["flags"]);
    expect(Object.keys(entries[0]!)).toEqual(["entry", "provider", "ready", "checks"]);
  });

  it("names an entry's provider when its key is another, and exits 1 with an empty priority list", async () => {
    setUp([{ id: "alpha", script: "line-agent.mjs" }], { providers: [{ id: "alpha", name: "work" }] });
    const run = await sandbox.run(["preflight", "work"]);
    expect(run.code).toBe(0);
    expect(run.stdout.split("\n")[0]).toBe("work (alpha, Stand-in alpha): ready");
    sandbox.write("config/config.json", { providers: [], auto_detect: false });
    expect(await sandbox.run(["preflight"])).toEqual({ code: 1, stdout: `No providers: none is listed in ${sandbox.config}/config.json and none is installed.\n`, stderr: "" });
  });

  it("exits 2 for an entry that is not in the priority list, naming it and the keys there are", async () => {
    setUp([
      { id: "alpha", script: "line-agent.mjs" },
      { id: "beta", script: "line-agent.mjs" },
    ]);
    const stderr = 'uuldana: preflight nosuch: no entry has this key [E_USAGE]\n  entries: alpha, beta\nhint: run "uuldana providers list" to see the priority list\n';
    expect(await sandbox.run(["preflight", "nosuch"])).toEqual({ code: 2, stdout: "", stderr });
    const json = await sandbox.run(["preflight", "nosuch", "--json"]);
    expect([json.code, json.stderr]).toEqual([2, stderr]);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: "E_USAGE", message: "preflight nosuch: no entry has this key" } });
  });

  it("checks a known provider that is not installed when auto_detect would add it once it is", async () => {
    setUp([{ id: "alpha", script: "line-agent.mjs" }], { auto_detect: true });
    sandbox.write("config/providers/gamma.json", standInManifest("gamma"));
    const run = await sandbox.run(["preflight", "gamma"]);
    expect(run.code).toBe(1);
    expect(run.stdout.split("\n").slice(0, 2)).toEqual(["gamma (Stand-in gamma): not ready", "  ✗ installed  no gamma on PATH"]);
    // without a name, the priority list as a start walks it: alpha only
    expect((await sandbox.run(["preflight"])).stdout.split("\n")[0]).toBe("alpha (Stand-in alpha): ready");
  });

  it("never loads node-pty or @xterm/headless, also with a built-in adapter", () => {
    sandbox = makeSandbox();
    linkAgent(sandbox, "codex", "line-agent.mjs");
    sandbox.write("config/config.json", { providers: ["codex"], auto_detect: false });
    const run = spawnSync(process.execPath, ["--import", forbidNative, bin, "preflight", "codex"], { cwd: sandbox.project, env: sandbox.env, encoding: "utf8" });
    expect(run.stderr).toBe("");
    // the stand-in's help lacks Codex's own flags
    expect(run.status).toBe(1);
    expect(run.stdout.split("\n").slice(0, 5)).toEqual([
      "codex (Codex CLI): not ready",
      `  ✓ installed  ${sandbox.path}/codex`,
      '  ✓ version    0.171.0, "codex --version" matched its version pattern',
      `  ✗ signed-in  not signed in: run "codex login" (found no ${sandbox.dir}/.codex/auth.json)`,
      '  ✗ flags      "codex --help" does not list --no-daemon (args), --sandbox (levels.ask.args), --ask-for-approval (levels.ask.args)',
    ]);
  });
});
