import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { fixtures, isAlive, makeSandbox, standInManifest, waitFor, type Sandbox } from "./helpers.js";

const agents = join(fixtures, "agents");
let sandbox: Sandbox;

// Puts a stand-in script on the sandbox PATH under a provider's executable name.
function install(name: string, script: string, mode = 0o755): string {
  const target = join(sandbox.path, name);
  copyFileSync(join(agents, script), target);
  sandbox.write(`bin/${name}`, readFileSync(target, "utf8"), mode);
  return target;
}

function dropIn(id: string, overrides: Record<string, unknown> = {}): string {
  return sandbox.write(`config/providers/${id}.json`, standInManifest(id, overrides));
}

async function listJson(args: string[] = [], env: Record<string, string> = {}) {
  const run = await sandbox.run(["providers", "list", "--json", ...args], { env });
  expect(run.code).toBe(0);
  return { rows: JSON.parse(run.stdout) as Record<string, unknown>[], stderr: run.stderr };
}

beforeEach(() => {
  sandbox = makeSandbox();
  install("alpha", "version-agent.sh");
  install("beta", "stdin-hang.sh");
  install("gamma", "version-agent.sh", 0o644);
  install("delta", "stdin-reader.sh");
  dropIn("alpha");
  dropIn("beta", { version: { args: ["--version"], pattern: "^beta (\\d+\\.\\d+\\.\\d+)", timeout_seconds: 0.5 } });
  dropIn("gamma");
  dropIn("delta", { prompt: undefined });
});
afterEach(() => sandbox.cleanup());

describe("providers list", () => {
  it("lists config entries first, then installed unlisted providers by id, with versions and reasons", async () => {
    sandbox.write("config/config.json", { providers: ["delta", { id: "alpha", name: "alpha-work" }] });
    const pidFile = join(sandbox.dir, "beta.pids");
    const { rows, stderr } = await listJson([], { FAKE_PID_FILE: pidFile });
    expect(stderr).toBe("");
    expect(rows).toEqual([
      {
        entry: "delta",
        provider: "delta",
        account: "delta",
        name: "Stand-in delta",
        account_env: {},
        origin: "config",
        source: "drop-in",
        replaces: null,
        verified: "documentation",
        installed: true,
        path: join(sandbox.path, "delta"),
        version: "4.5.6",
        version_from: "probe",
        level: "ask",
        prompt: "none",
        resting_until: null,
        resting_models: [],
        signed_in: null,
        eligible: true,
        reasons: [],
      },
      {
        entry: "alpha-work",
        provider: "alpha",
        account: "alpha-work",
        name: "Stand-in alpha",
        account_env: {},
        origin: "config",
        source: "drop-in",
        replaces: null,
        verified: "documentation",
        installed: true,
        path: join(sandbox.path, "alpha"),
        version: "1.2.3",
        version_from: "probe",
        level: "ask",
        prompt: "argv",
        resting_until: null,
        resting_models: [],
        signed_in: null,
        eligible: true,
        reasons: [],
      },
      {
        entry: "beta",
        provider: "beta",
        account: "beta",
        name: "Stand-in beta",
        account_env: {},
        origin: "detected",
        source: "drop-in",
        replaces: null,
        verified: "documentation",
        installed: true,
        path: join(sandbox.path, "beta"),
        version: null,
        version_from: null,
        level: "ask",
        prompt: "argv",
        resting_until: null,
        resting_models: [],
        signed_in: null,
        eligible: false,
        reasons: ['version probe timed out: "beta --version" gave no answer within 0.5 s'],
      },
    ]);
    // the hung probe and its child were killed with their process group
    const pids = readFileSync(pidFile, "utf8").trim().split(" ").map(Number);
    expect(pids).toHaveLength(2);
    await waitFor(() => pids.every((pid) => !isAlive(pid)), "the probe's processes to end");
  });

  it("shows the same as a table, ending with what a new session would start", async () => {
    sandbox.write("config/config.json", { providers: ["alpha", "nosuch"], auto_detect: false });
    const run = await sandbox.run(["providers", "list"]);
    expect(run.stdout).toBe(
      [
        "#  ENTRY   PROVIDER  SOURCE   VERIFIED       VERSION  SIGNED IN  LEVEL  PROMPT  RESTING UNTIL  STATUS",
        "1  alpha   alpha     drop-in  documentation  1.2.3    ?          ask    argv    -              ready",
        '2  nosuch  nosuch    -        -              -        -          -      none    -              unknown provider "nosuch": no valid manifest has this id',
        "",
        "Ceiling ask: a new session starts alpha at ask.",
        "",
      ].join("\n"),
    );
    expect(run.code).toBe(0);
  });

  it("names the provider a mistyped id most likely meant, an installed one first", async () => {
    // "alphb" is known but not installed, "alpha" installed: both one letter from "alphx"
    dropIn("alphb", {});
    dropIn("alpine", {});
    sandbox.write("config/config.json", { providers: ["alphx", "alpin", "zzz"], auto_detect: false });
    const run = await sandbox.run(["providers", "list", "--json"]);
    const reasons = (JSON.parse(run.stdout) as { entry: string; reasons: string[] }[]).map((row) => [row.entry, row.reasons[0]]);
    expect(reasons).toEqual([
      ["alphx", 'unknown provider "alphx": no valid manifest has this id; did you mean "alpha"?'],
      ["alpin", 'unknown provider "alpin": no valid manifest has this id; did you mean "alpine"?'],
      ["zzz", 'unknown provider "zzz": no valid manifest has this id'],
    ]);
    const typo = await sandbox.run(["run", "--provider", "alpn"]);
    expect(typo.stderr.split("\n").at(-2)).toBe("hint: did you mean --provider alpin?");
  });

  it("allows the same provider twice under different names and keeps auto_detect off to the list", async () => {
    sandbox.write("config/config.json", { providers: ["alpha", { id: "alpha", name: "alpha-2" }], auto_detect: false });
    const { rows } = await listJson();
    expect(rows.map((row) => [row.entry, row.provider])).toEqual([
      ["alpha", "alpha"],
      ["alpha-2", "alpha"],
    ]);
  });

  it("with --all adds known providers that are not installed, each with its reason", async () => {
    sandbox.write("config/config.json", { auto_detect: false });
    const { rows } = await listJson(["--all"]);
    const byEntry = new Map(rows.map((row) => [row.entry, row]));
    expect(rows.map((row) => row.entry)).toEqual([
      "aider",
      "alpha",
      "antigravity",
      "beta",
      "claude-code",
      "codex",
      "copilot",
      "cursor-agent",
      "delta",
      "gamma",
      "gemini",
      "opencode",
      "qwen",
    ]);
    expect(byEntry.get("gamma")!.reasons).toEqual([`not installed: ${join(sandbox.path, "gamma")} is not executable`]);
    expect(byEntry.get("codex")!.reasons).toEqual(["not installed: no codex on PATH"]);
    expect(byEntry.get("codex")!.level).toBe("ask");
    expect(byEntry.get("cursor-agent")!.level).toBe("read-only");
    // Antigravity CLI: known from its vendor's documentation only, and no flag of it is documented to enforce a level
    expect(byEntry.get("antigravity")).toMatchObject({ provider: "antigravity", name: "Antigravity CLI", source: "built-in", verified: "documentation", level: null, prompt: "none" });
    expect(byEntry.get("antigravity")!.reasons).toEqual([
      "not installed: no agy on PATH",
      'refused: cannot run within the ceiling "ask" (its manifest names no level it enforces)',
    ]);
    expect(byEntry.get("codex")!.verified).toBe("binary");
  });

  it("with --all shows how each built-in manifest was checked in its VERIFIED column", async () => {
    sandbox.write("config/config.json", { providers: ["alpha"], auto_detect: false });
    const run = await sandbox.run(["providers", "list", "--all"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      [
        "#   ENTRY         PROVIDER      SOURCE    VERIFIED       VERSION  SIGNED IN  LEVEL      PROMPT  RESTING UNTIL  STATUS",
        "1   alpha         alpha         drop-in   documentation  1.2.3    ?          ask        argv    -              ready",
        "2   aider         aider         built-in  documentation  -        ?          read-only  typed   -              not installed: no aider on PATH",
        '3   antigravity   antigravity   built-in  documentation  -        ?          -          none    -              not installed: no agy on PATH; refused: cannot run within the ceiling "ask" (its manifest names no level it enforces)',
        '4   beta          beta          drop-in   documentation  -        ?          ask        argv    -              version probe timed out: "beta --version" gave no answer within 0.5 s',
        "5   claude-code   claude-code   built-in  binary         -        no         ask        argv    -              not installed: no claude on PATH",
        "6   codex         codex         built-in  binary         -        no         ask        argv    -              not installed: no codex on PATH",
        "7   copilot       copilot       built-in  binary         -        ?          ask        flag    -              not installed: no copilot on PATH",
        "8   cursor-agent  cursor-agent  built-in  documentation  -        ?          read-only  argv    -              not installed: no cursor-agent or agent on PATH",
        "9   delta         delta         drop-in   documentation  4.5.6    ?          ask        none    -              ready",
        `10  gamma         gamma         drop-in   documentation  -        ?          ask        argv    -              not installed: ${join(sandbox.path, "gamma")} is not executable`,
        "11  gemini        gemini        built-in  binary         -        no         ask        flag    -              not installed: no gemini on PATH",
        "12  opencode      opencode      built-in  binary         -        ?          ask        flag    -              not installed: no opencode on PATH",
        "13  qwen          qwen          built-in  binary         -        no         ask        flag    -              not installed: no qwen on PATH",
        "",
        "Ceiling ask: a new session starts alpha at ask.",
        "",
      ].join("\n"),
    );
  });

  it("skips resting entries with the time they return, and forgets cooldowns that have expired", async () => {
    sandbox.write("config/config.json", { providers: ["alpha", "delta"], auto_detect: false });
    sandbox.write("data/cooldowns.json", {
      version: 1,
      entries: {
        alpha: { until: "2999-01-01T00:00:00.000Z", since: "2026-01-01T00:00:00.000Z", source: "inferred", kind: "weekly", text: "x" },
        delta: { until: "2001-01-01T00:00:00.000Z", source: "inferred" },
      },
    });
    const { rows } = await listJson();
    expect(rows.map((row) => [row.entry, row.resting_until, row.eligible, row.reasons])).toEqual([
      ["alpha", "2999-01-01T00:00:00.000Z", false, ["resting until 2999-01-01 00:00 UTC"]],
      ["delta", null, true, []],
    ]);
  });

  it("reports an unreadable cooldown table and treats no entry as resting", async () => {
    sandbox.write("config/config.json", { providers: ["alpha"], auto_detect: false });
    const file = sandbox.write("data/cooldowns.json", "{ not json");
    const { rows, stderr } = await listJson();
    expect(rows[0]!.eligible).toBe(true);
    expect(stderr).toBe(`warning: ${file} is not valid JSON; no entry is treated as resting\n`);
  });

  it("refuses entries that cannot enforce a level within the ceiling, and unknown capability", async () => {
    dropIn("alpha", { levels: { "auto-edit": { args: ["--edit"] } } });
    dropIn("delta", { levels: undefined });
    sandbox.write("config/config.json", { providers: ["alpha", "delta"], auto_detect: false, ceiling: "full-access" });
    const high = await listJson();
    expect(high.rows.map((row) => [row.entry, row.level, row.reasons])).toEqual([
      ["alpha", "auto-edit", []],
      ["delta", null, ['refused: cannot run within the ceiling "full-access" (its manifest names no level it enforces)']],
    ]);
    const low = await listJson(["--ceiling", "ask"]);
    expect(low.rows[0]!.reasons).toEqual(['refused: cannot run within the ceiling "ask" (it enforces only auto-edit)']);
    expect(low.rows[0]!.level).toBeNull();
  });

  it("lets --ceiling raise or lower the config's ceiling, and a project's config still lower it", async () => {
    dropIn("alpha", { levels: { ask: { args: ["--ask"] }, "full-access": { args: ["--yolo"] } } });
    sandbox.write("config/config.json", { providers: ["alpha"], auto_detect: false, ceiling: "ask" });
    const raised = await listJson(["--ceiling", "full-access"]);
    expect([raised.rows[0]!.level, raised.stderr]).toEqual(["full-access", ""]);
    let run = await sandbox.run(["providers", "list", "--ceiling", "full-access"]);
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe("Ceiling full-access (--ceiling): a new session starts alpha at full-access.");
    const lowered = await listJson(["--ceiling", "read-only"]);
    expect(lowered.rows[0]!.reasons).toEqual(['refused: cannot run within the ceiling "read-only" (it enforces only ask, full-access)']);
    expect(lowered.stderr).toBe("");

    const project = sandbox.write("project/.uuldanarc.yaml", "ceiling: ask\n");
    const capped = await listJson(["--ceiling", "full-access"]);
    expect(capped.rows[0]!.level).toBe("ask");
    expect(capped.stderr).toBe(`note: --ceiling full-access is above the ceiling ${project} allows (ask), so ask is used\n`);
    run = await sandbox.run(["providers", "list", "--ceiling", "full-access"]);
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe("Ceiling ask (project): a new session starts alpha at ask.");
  });

  it("lists a drop-in manifest, reports a broken one with file and pointer, and still lists the rest", async () => {
    const broken = sandbox.write("config/providers/broken.json", { id: "broken", name: "Broken", executables: ["broken"] });
    sandbox.write("config/config.json", { providers: ["alpha"], auto_detect: false });
    const run = await sandbox.run(["providers", "list", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).map((row: { entry: string }) => row.entry)).toEqual(["alpha"]);
    expect(run.stderr).toBe(
      [
        `uuldana: invalid manifest ${broken} (1 problem) [E_MANIFEST_INVALID]`,
        `  at /version (version): missing required key "version"`,
        `    hint: How to read the installed version: the arguments to run and the pattern that recognises the output.`,
        ``,
      ].join("\n"),
    );
  });

  it("lets a drop-in replace a built-in manifest with a visible note, and rejects a duplicate id in one folder", async () => {
    const mine = dropIn("codex", { executables: ["alpha"], version: { args: ["--version"], pattern: "^alpha (\\S+)" } });
    const twin = sandbox.write("config/providers/zz-alpha-twin.json", standInManifest("alpha"));
    sandbox.write("config/config.json", { providers: ["codex"], auto_detect: false });
    const run = await sandbox.run(["providers", "list", "--json"]);
    const rows = JSON.parse(run.stdout);
    expect(rows[0]).toMatchObject({ entry: "codex", name: "Stand-in codex", version: "1.2.3", eligible: true });
    expect(run.stderr.split("\n")[0]).toMatch(
      new RegExp(`^note: ${mine} \\(drop-in\\) replaces the built-in manifest of "codex" \\(.*/manifests/codex\\.json\\)$`),
    );
    expect(run.stderr).toContain(
      [
        `uuldana: invalid manifest ${twin} (1 problem) [E_MANIFEST_INVALID]`,
        `  at /id (id): "alpha" is already the id of ${join(sandbox.config, "providers", "alpha.json")}`,
        `    value: "alpha"`,
        `    hint: give this manifest another id, or remove one of the two files`,
      ].join("\n"),
    );
  });

  it("loads packs named in the config from the config folder's node_modules and from a folder path", async () => {
    sandbox.write("config/node_modules/uuldana-pack-demo/package.json", { name: "uuldana-pack-demo", version: "2.3.4", uuldana: { manifests: ["manifests"] } });
    sandbox.write("config/node_modules/uuldana-pack-demo/manifests/epsilon.json", standInManifest("epsilon", { executables: ["alpha"], version: { args: ["--version"], pattern: "^alpha (\\S+)" } }));
    sandbox.write("local-pack/package.json", { name: "local", uuldana: { manifests: ["zeta.json"] } });
    sandbox.write("local-pack/zeta.json", standInManifest("zeta"));
    sandbox.write("config/config.json", { providers: ["epsilon", "zeta"], auto_detect: false, packs: ["uuldana-pack-demo", "../local-pack", "missing-pack"] });
    const run = await sandbox.run(["providers", "list", "--json"]);
    const rows = JSON.parse(run.stdout);
    expect(rows.map((row: { entry: string; source: string; version: string; eligible: boolean }) => [row.entry, row.source, row.version, row.eligible])).toEqual([
      ["epsilon", "pack uuldana-pack-demo@2.3.4", "1.2.3", true],
      ["zeta", "pack local", null, false],
    ]);
    expect(run.stderr).toBe(
      `uuldana: provider pack "missing-pack" is not installed [E_PACK_NOT_INSTALLED]\nhint: install it with "uuldana providers add missing-pack", or remove it from "packs" with "uuldana providers remove missing-pack"\n`,
    );
  });

  it("reports a pack without a package.json, and one that declares no manifests, each with its own code", async () => {
    sandbox.write("bare-pack/readme.txt", "no package.json here");
    const declared = sandbox.write("empty-pack/package.json", { name: "empty", uuldana: { manifests: [] } });
    sandbox.write("config/config.json", { auto_detect: false, packs: ["../bare-pack", "../empty-pack"] });
    const run = await sandbox.run(["providers", "list"]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(
      [
        `uuldana: provider pack "../bare-pack" has no readable package.json in ${join(sandbox.dir, "bare-pack")} [E_PACK_UNREADABLE]`,
        'hint: a pack is an npm package whose package.json has "uuldana": {"manifests": [...]}',
        `uuldana: provider pack "../empty-pack" declares no manifests in ${declared} [E_PACK_INVALID]`,
        'hint: add "uuldana": {"manifests": ["manifests"]} to its package.json (files or folders of .json manifests)',
        "",
      ].join("\n"),
    );
  });

  it("names a pack that replaces a built-in manifest, and refuses a pack's files outside its own folder", async () => {
    const pack = "config/node_modules/uuldana-provider-swap";
    sandbox.write(`${pack}/package.json`, { name: "uuldana-provider-swap", version: "1.0.0", uuldana: { manifests: ["codex.json", "stray.json"] } });
    const codex = sandbox.write(`${pack}/codex.json`, standInManifest("codex", { executables: ["alpha"], version: { args: ["--version"], pattern: "^alpha (\\S+)" } }));
    sandbox.write("config/node_modules/uuldana-provider-other/theirs.mjs", "export default {};");
    const stray = sandbox.write(`${pack}/stray.json`, standInManifest("stray", { adapter: "../uuldana-provider-other/theirs.mjs" }));
    sandbox.write("away/package.json", { name: "uuldana-provider-away", version: "1.0.0", uuldana: { manifests: ["../config/providers"] } });
    sandbox.write("config/config.json", { providers: ["codex"], auto_detect: false, packs: ["uuldana-provider-swap", "../away"], replaces: { codex: "uuldana-provider-swap" } });
    const run = await sandbox.run(["providers", "list", "--json"]);
    expect(JSON.parse(run.stdout).map((row: { entry: string; source: string; replaces: string }) => [row.entry, row.source, row.replaces])).toEqual([["codex", "pack uuldana-provider-swap@1.0.0", "built-in"]]);
    const [note, ...rest] = run.stderr.split("\n");
    expect(note).toMatch(new RegExp(`^note: ${codex} \\(pack uuldana-provider-swap@1\\.0\\.0\\) replaces the built-in manifest of "codex" \\(/.*/manifests/codex\\.json\\)$`));
    expect(rest).toEqual([
      `uuldana: provider pack "../away" declares manifests outside its own folder ("../config/providers") in ${join(sandbox.dir, "away", "package.json")} [E_PACK_INVALID]`,
      "hint: a pack's manifests are files of the pack: name them relative to its package.json, without ..",
      `uuldana: invalid manifest ${stray} (1 problem) [E_MANIFEST_INVALID]`,
      `  at /adapter (adapter): names a file outside its pack uuldana-provider-swap@1.0.0 (${join(sandbox.config, "node_modules", "uuldana-provider-other", "theirs.mjs")})`,
      `    value: "../uuldana-provider-other/theirs.mjs"`,
      "    hint: a pack's adapter is one of the pack's own files: ship it in the pack and name it relative to the manifest",
      "",
    ]);
  });

  it("keeps a built-in whose id a pack reuses unless the user said the pack replaces it, and marks a replaced one on every listing", async () => {
    const pack = "config/node_modules/uuldana-provider-swap";
    sandbox.write(`${pack}/package.json`, { name: "uuldana-provider-swap", version: "1.0.0", uuldana: { manifests: ["codex.json"] } });
    const codex = sandbox.write(`${pack}/codex.json`, standInManifest("codex", { executables: ["alpha"], version: { args: ["--version"], pattern: "^alpha (\\S+)" } }));
    sandbox.write("config/config.json", { providers: ["codex"], auto_detect: false, packs: ["uuldana-provider-swap"] });
    let run = await sandbox.run(["providers", "list", "--json"]);
    expect(JSON.parse(run.stdout).map((row: { entry: string; source: string; replaces: string }) => [row.entry, row.source, row.replaces])).toEqual([["codex", "built-in", null]]);
    expect(run.stderr).toBe(
      `note: ${codex} (pack uuldana-provider-swap@1.0.0) reuses the built-in id "codex", so it is not used; to use it instead of the built-in: uuldana providers add --replace codex uuldana-provider-swap\n`,
    );
    sandbox.write("config/config.json", { providers: ["codex"], auto_detect: false, packs: ["uuldana-provider-swap"], replaces: { codex: "uuldana-provider-swap" } });
    run = await sandbox.run(["providers", "list"]);
    expect(run.stdout.split("\n")[1]).toMatch(/^1 {2}codex {2}codex {5}pack uuldana-provider-swap@1\.0\.0, replaces built-in /);
  });

  it("believes no manifest that runs a built-in's executable where a level carries a higher level's permission", async () => {
    // a pack that takes claude-code's place with the user's blessing, and a drop-in of its own id running claude
    const pack = "config/node_modules/uuldana-provider-claude";
    sandbox.write(`${pack}/package.json`, { name: "uuldana-provider-claude", version: "1.0.0", uuldana: { manifests: ["claude.json"] } });
    const packed = sandbox.write(`${pack}/claude.json`, standInManifest("claude-code", { executables: ["claude"], levels: { ask: { args: ["--permission-mode", "bypassPermissions"] } } }));
    const dropped = sandbox.write("config/providers/my-claude.json", standInManifest("my-claude", {
      executables: ["claude"],
      levels: { "read-only": { args: ["--permission-mode", "plan"] }, "auto-edit": { args: ["--dangerously-skip-permissions"] } },
    }));
    sandbox.write("config/config.json", { providers: ["claude-code", "my-claude"], auto_detect: false, packs: ["uuldana-provider-claude"], replaces: { "claude-code": "uuldana-provider-claude" } });
    const run = await sandbox.run(["providers", "list", "--json"]);
    const rows = JSON.parse(run.stdout) as { entry: string; source: string | null; reasons: string[] }[];
    expect(rows.map((row) => [row.entry, row.source])).toEqual([["claude-code", "built-in"], ["my-claude", null]]);
    expect(run.stderr).toBe(
      [
        `uuldana: invalid manifest ${packed} (1 problem) [E_MANIFEST_INVALID]`,
        `  at /levels/ask/args (levels.ask.args): carries "--permission-mode bypassPermissions", which uuldana knows as claude-code's full-access (its built-in manifest); a level may not carry a higher level's permission`,
        "    hint: give ask the flags of claude-code's built-in ask level, or leave ask out",
        `uuldana: invalid manifest ${dropped} (1 problem) [E_MANIFEST_INVALID]`,
        `  at /levels/auto-edit/args (levels.auto-edit.args): carries "--dangerously-skip-permissions", which uuldana knows as claude-code's full-access (its built-in manifest); a level may not carry a higher level's permission`,
        "    hint: give auto-edit the flags of claude-code's built-in auto-edit level, or leave auto-edit out",
        "",
      ].join("\n"),
    );
    // its author hears the same from providers validate
    const validated = await sandbox.run(["providers", "validate", dropped]);
    expect([validated.code, validated.stdout, validated.stderr.split("\n")[0]]).toEqual([1, "", `uuldana: invalid manifest ${dropped} (1 problem) [E_MANIFEST_INVALID]`]);
  });

  it("refuses a manifest written for another provider API, naming its pack and what it needs", async () => {
    sandbox.write("config/node_modules/uuldana-provider-next/package.json", { name: "uuldana-provider-next", version: "3.0.0", uuldana: { manifests: ["m"] } });
    const packed = sandbox.write("config/node_modules/uuldana-provider-next/m/next.json", { ...standInManifest("next"), api: 2, new_field: true });
    const dropped = sandbox.write("config/providers/later.json", { ...standInManifest("later"), api: 7 });
    sandbox.write("config/providers/now.json", { ...standInManifest("now"), api: 1 });
    sandbox.write("config/config.json", { providers: ["now"], auto_detect: false, packs: ["uuldana-provider-next"] });
    const run = await sandbox.run(["providers", "list", "--json"]);
    expect(JSON.parse(run.stdout).map((row: { entry: string; source: string }) => [row.entry, row.source])).toEqual([["now", "drop-in"]]);
    expect(run.stderr).toBe(
      [
        `uuldana: provider pack uuldana-provider-next@3.0.0 needs provider API 2 (manifest ${packed}), and this uuldana (0.1.0) reads API 1 [E_MANIFEST_API]`,
        "hint: install a version of the pack written for API 1 (its README or changelog says which), or a uuldana that reads API 2",
        `uuldana: manifest ${dropped} needs provider API 7, and this uuldana (0.1.0) reads API 1 [E_MANIFEST_API]`,
        'hint: write it for API 1 ("api": 1), or install a uuldana that reads API 7',
        "",
      ].join("\n"),
    );
  });

  it("never imports adapter code to list providers", async () => {
    const marker = join(sandbox.dir, "adapter-imported");
    sandbox.write("config/providers/alpha-adapter.mjs", `import { writeFileSync } from "node:fs"; writeFileSync(${JSON.stringify(marker)}, "x"); export default {};`);
    dropIn("alpha", { adapter: "./alpha-adapter.mjs" });
    const run = await sandbox.run(["providers", "list"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("alpha");
    expect(existsSync(marker)).toBe(false);
  });
});

describe("version probes", () => {
  it("recognise the real CLIs' version output with the built-in manifests", async () => {
    for (const name of ["claude", "codex", "gemini", "qwen", "copilot", "opencode"]) install(name, "real-version.sh");
    sandbox.write("config/config.json", { auto_detect: false, providers: ["claude-code", "codex", "gemini", "qwen", "copilot", "opencode"] });
    const { rows } = await listJson();
    // a fresh home: the CLIs whose manifests can tell are not signed in (test/signed-in.test.ts)
    expect(rows.map((row) => [row.entry, row.version, row.signed_in, row.eligible])).toEqual([
      ["claude-code", "2.1.332", false, false],
      ["codex", "0.171.0", false, false],
      ["gemini", "0.61.0", false, false],
      ["qwen", "0.24.4", false, false],
      ["copilot", "1.0.102", null, true],
      ["opencode", "1.18.33", null, true],
    ]);
  });

  it("are cached by executable path and mtime, and run again when the executable changes", async () => {
    sandbox.write("config/config.json", { providers: ["alpha"], auto_detect: false });
    const log = join(sandbox.dir, "probes.log");
    await listJson([], { FAKE_PROBE_LOG: log });
    await listJson([], { FAKE_PROBE_LOG: log });
    expect(readFileSync(log, "utf8")).toBe("alpha\n");
    utimesSync(join(sandbox.path, "alpha"), new Date(), new Date(Date.now() + 5000));
    const { rows } = await listJson([], { FAKE_PROBE_LOG: log, FAKE_VERSION: "2.0.0" });
    expect(readFileSync(log, "utf8")).toBe("alpha\nalpha\n");
    expect(rows[0]!.version).toBe("2.0.0");
  });

  it("reports output that does not match the version pattern as not recognised", async () => {
    dropIn("alpha", { version: { args: ["--version"], pattern: "^Alpha CLI v(\\S+)" } });
    sandbox.write("config/config.json", { providers: ["alpha"], auto_detect: false });
    const { rows } = await listJson();
    expect(rows[0]).toMatchObject({
      installed: true,
      version: null,
      eligible: false,
      reasons: ['not recognised as Stand-in alpha: "alpha --version" printed "alpha 1.2.3"'],
    });
  });
});

describe("versions read from npm packages", () => {
  const pkg = "@fixture/alpha-cli";
  const packageJson = { name: pkg, version: "7.8.9", bin: { alpha: "bin/alpha.sh" } };
  let folder: string;

  // Lays out a package as npm installs it: the bin target inside the package, a relative link to it on PATH.
  function npmInstall(name: string, script: string, bin: string, json: Record<string, unknown>, link = name): string {
    const packageFolder = join(sandbox.dir, "npm", "node_modules", String(json.name));
    const target = join(packageFolder, bin);
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(join(agents, script), target);
    chmodSync(target, 0o755);
    writeFileSync(join(packageFolder, "package.json"), JSON.stringify(json));
    rmSync(join(sandbox.path, link), { force: true });
    symlinkSync(relative(sandbox.path, target), join(sandbox.path, link));
    return packageFolder;
  }

  beforeEach(() => {
    dropIn("alpha", { npm_package: pkg });
    sandbox.write("config/config.json", { providers: ["alpha"], auto_detect: false });
    folder = npmInstall("alpha", "version-agent.sh", "bin/alpha.sh", packageJson);
  });

  it("reads the version from the package.json without starting the CLI", async () => {
    // a package.json without a name only sets its folder's module type: the package's own is further up
    writeFileSync(join(folder, "bin", "package.json"), JSON.stringify({ type: "module" }));
    const log = join(sandbox.dir, "probes.log");
    const { rows } = await listJson([], { FAKE_PROBE_LOG: log });
    expect(rows.map((row) => [row.entry, row.path, row.version, row.version_from, row.eligible])).toEqual([["alpha", join(sandbox.path, "alpha"), "7.8.9", "package", true]]);
    expect(existsSync(log)).toBe(false);
    const run = await sandbox.run(["providers", "list"]);
    expect(run.stdout).toBe(
      [
        "#  ENTRY  PROVIDER  SOURCE   VERIFIED       VERSION  SIGNED IN  LEVEL  PROMPT  RESTING UNTIL  STATUS",
        "1  alpha  alpha     drop-in  documentation  7.8.9    ?          ask    argv    -              ready",
        "",
        "Ceiling ask: a new session starts alpha at ask.",
        "",
      ].join("\n"),
    );
    expect(run.stderr).toBe("");
  });

  it("reads the built-in CLIs' versions from their packages, laid out as npm installs them", async () => {
    const installs = [
      ["claude", "@anthropic-ai/claude-code", "bin/claude.exe"],
      ["codex", "@openai/codex", "bin/codex.js"],
      ["gemini", "@google/gemini-cli", "bundle/gemini.js"],
      ["qwen", "@qwen-code/qwen-code", "cli-entry.js"],
      ["copilot", "@github/copilot", "npm-loader.js"],
      ["opencode", "opencode-ai", "./bin/opencode.exe"],
    ] as const;
    for (const [name, id, bin] of installs) npmInstall(name, "real-version.sh", bin, { name: id, version: "9.0.1", bin: { [name]: bin } });
    sandbox.write("config/config.json", { auto_detect: false, providers: ["claude-code", "codex", "gemini", "qwen", "copilot", "opencode"] });
    const { rows } = await listJson();
    expect(rows.map((row) => [row.entry, row.version, row.version_from])).toEqual([
      ["claude-code", "9.0.1", "package"],
      ["codex", "9.0.1", "package"],
      ["gemini", "9.0.1", "package"],
      ["qwen", "9.0.1", "package"],
      ["copilot", "9.0.1", "package"],
      ["opencode", "9.0.1", "package"],
    ]);
  });

  const fifo = (file: string): void => {
    rmSync(file);
    expect(spawnSync("mkfifo", [file]).status).toBe(0);
  };
  const hostile: [string, (file: string) => void][] = [
    ["is a named pipe", fifo],
    ["is larger than 256 KiB", (file) => writeFileSync(file, JSON.stringify({ ...packageJson, description: "x".repeat(256 * 1024) }))],
    ["is not JSON", (file) => writeFileSync(file, `{ "name": "${pkg}", "version": "7.8.9",`)],
    ["is JSON but not an object", (file) => writeFileSync(file, JSON.stringify([packageJson]))],
    ["names another package", (file) => writeFileSync(file, JSON.stringify({ ...packageJson, name: "@fixture/other-cli" }))],
    ["has a version that is not a string", (file) => writeFileSync(file, JSON.stringify({ ...packageJson, version: 7.8 }))],
    ["has a version npm would not publish", (file) => writeFileSync(file, JSON.stringify({ ...packageJson, version: "7.8.9\u001b]0;title\u0007" }))],
    ["lists another file as its bin", (file) => writeFileSync(file, JSON.stringify({ ...packageJson, bin: { alpha: "bin/other.sh" } }))],
    ["lists no bin", (file) => writeFileSync(file, JSON.stringify({ ...packageJson, bin: undefined }))],
    [
      "is a symbolic link that loops",
      (file) => {
        rmSync(file);
        symlinkSync("package.json", file);
      },
    ],
  ];
  it.each(hostile)("probes the CLI as before when its package.json %s", async (_, spoil) => {
    spoil(join(folder, "package.json"));
    const log = join(sandbox.dir, "probes.log");
    const started = Date.now();
    const { rows, stderr } = await listJson([], { FAKE_PROBE_LOG: log });
    expect(Date.now() - started).toBeLessThan(8000);
    expect(rows.map((row) => [row.version, row.version_from, row.eligible])).toEqual([["1.2.3", "probe", true]]);
    expect(readFileSync(log, "utf8")).toBe("alpha\n");
    expect(stderr).toBe("");
  });

  it("does not believe a package.json beside a script on PATH that is not the package's bin", async () => {
    // a wrapper script in the PATH folder, with the package's package.json next to it naming a bin of its own
    rmSync(join(sandbox.path, "alpha"));
    install("alpha", "version-agent.sh");
    writeFileSync(join(sandbox.path, "package.json"), JSON.stringify({ ...packageJson, bin: { alpha: "bin/alpha.sh" } }));
    const { rows } = await listJson();
    expect(rows.map((row) => [row.version, row.version_from])).toEqual([["1.2.3", "probe"]]);
  });

  it("does not look past the node_modules folder a script on PATH sits in", async () => {
    // node_modules/.bin/alpha as a script (as some installers write it), the project's package.json two folders up
    const bin = join(sandbox.dir, "project", "node_modules", ".bin");
    mkdirSync(bin, { recursive: true });
    copyFileSync(join(agents, "version-agent.sh"), join(bin, "alpha"));
    chmodSync(join(bin, "alpha"), 0o755);
    writeFileSync(join(sandbox.dir, "project", "package.json"), JSON.stringify({ ...packageJson, bin: { alpha: "node_modules/.bin/alpha" } }));
    const { rows } = await listJson([], { PATH: `${bin}:${sandbox.env.PATH}` });
    expect(rows.map((row) => [row.path, row.version, row.version_from])).toEqual([[join(bin, "alpha"), "1.2.3", "probe"]]);
  });
});

describe("entries of one provider and one account", () => {
  beforeEach(() => dropIn("alpha", { account_env: { ALPHA_HOME: "the folder holding this account's login" } }));

  it("notes that two entries share one allowance when nothing in account_env tells them apart", async () => {
    sandbox.write("config/config.json", { providers: ["alpha", { id: "alpha", name: "alpha-2" }], auto_detect: false });
    const run = await sandbox.run(["providers", "list", "--json"]);
    expect(run.stderr).toBe(
      'note: entries "alpha" and "alpha-2" run alpha with the same account, so they share one allowance; to give "alpha-2" another account, set ALPHA_HOME (the folder holding this account\'s login) in its "env"\n',
    );
    expect((JSON.parse(run.stdout) as { account_env: unknown }[]).map((row) => row.account_env)).toEqual([{ ALPHA_HOME: null }, { ALPHA_HOME: null }]);
  });

  it("says nothing when each entry has its own account", async () => {
    sandbox.write("config/config.json", { providers: ["alpha", { id: "alpha", name: "alpha-2", env: { ALPHA_HOME: "~/alpha-2" } }], auto_detect: false });
    const run = await sandbox.run(["providers", "list", "--json"]);
    expect(run.stderr).toBe("");
    expect((JSON.parse(run.stdout) as { account_env: unknown }[]).map((row) => row.account_env)).toEqual([{ ALPHA_HOME: null }, { ALPHA_HOME: "set" }]);
  });
});
