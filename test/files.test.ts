import { spawnSync } from "node:child_process";
import { lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { readRegularFile } from "../core/base/files.js";
import { changeOrder } from "../core/config/agent-order.js";
import { readCooldowns, updateCooldowns } from "../core/session/cooldowns.js";
import { Journal } from "../core/session/journal.js";
import { installAgents } from "./agents.js";
import { bin, makeSandbox, standInManifest, type Run, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

let sandbox: Sandbox;
const terminals: TestTerminal[] = [];
beforeEach(() => {
  sandbox = makeSandbox();
});
afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.kill();
  sandbox.cleanup();
});

const fifo = (file: string): string => {
  mkdirSync(join(file, ".."), { recursive: true });
  expect(spawnSync("mkfifo", [file]).status).toBe(0);
  return file;
};

// Runs the CLI and fails if it takes longer than a few seconds: a named pipe must never hold it.
async function runQuickly(args: string[], options: { cwd?: string } = {}): Promise<Run> {
  const started = Date.now();
  const run = await sandbox.run(args, options);
  expect(Date.now() - started).toBeLessThan(8000);
  return run;
}

const row = (until: string) => ({ until: new Date(until), since: new Date("2026-11-30T12:00:00Z"), source: "inferred" as const, kind: "weekly", text: "limit" });

describe("config.json that is not a file", () => {
  const configFile = (): string => join(sandbox.config, "config.json");
  const fix = "hint: config.json must be a JSON file: replace it with a regular file, or remove it (without it uuldana uses its defaults)";
  const linkFix = "hint: config.json must be a JSON file: point the link at an existing file, or remove it (without it uuldana uses its defaults)";

  // what the system said is shown as the cause where uuldana's reason only names its code
  const loop = (): string => `cause: ELOOP: too many symbolic links encountered, open '${configFile()}'\n`;

  it.each([
    ["a named pipe", () => fifo(configFile()), () => "is a named pipe (FIFO), not a file", fix, () => ""],
    ["a folder", () => mkdirSync(configFile()), () => "is a folder, not a file", fix, () => ""],
    ["a symbolic link loop", () => symlinkSync(configFile(), configFile()), () => "is a symbolic link that loops (ELOOP)", linkFix, loop],
    ["a link to nothing", () => symlinkSync(join(sandbox.dir, "nowhere.json"), configFile()), () => `is a symbolic link to ${join(sandbox.dir, "nowhere.json")}, which does not exist`, linkFix, () => ""],
  ])("as %s: exit 2, the file, what it is, the fix and the cause", async (_, make, what, hint, cause) => {
    make();
    expect(await runQuickly(["providers", "list"])).toEqual({
      code: 2,
      stdout: "",
      stderr: `uuldana: cannot read config ${configFile()}: it ${what()} [E_CONFIG_UNREADABLE]\n${hint}\n${cause()}`,
    });
  });

  it("as a symbolic link loop with a line break in its folder's name: the cause stays one line, and --json carries it", async () => {
    const scratch = makeSandbox();
    try {
      const folder = join(scratch.dir, "con\nfig");
      mkdirSync(folder);
      const file = join(folder, "config.json");
      symlinkSync(file, file);
      const shown = file.replace("\n", "\\n");
      const run = await scratch.run(["providers", "list", "--json"], { env: { UULDANA_CONFIG_DIR: folder } });
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(
        [
          `uuldana: cannot read config ${shown}: it is a symbolic link that loops (ELOOP) [E_CONFIG_UNREADABLE]`,
          `hint: config.json must be a JSON file: point the link at an existing file, or remove it (without it uuldana uses its defaults)`,
          `cause: ELOOP: too many symbolic links encountered, open '${shown}'`,
          "",
        ].join("\n"),
      );
      expect(JSON.parse(run.stdout)).toEqual({
        error: {
          code: "E_CONFIG_UNREADABLE",
          message: `cannot read config ${file}: it is a symbolic link that loops (ELOOP)`,
          details: [],
          hint: "config.json must be a JSON file: point the link at an existing file, or remove it (without it uuldana uses its defaults)",
          cause: [{ code: null, message: `ELOOP: too many symbolic links encountered, open '${file}'` }],
        },
      });
    } finally {
      scratch.cleanup();
    }
  });

  it("given with --config as a named pipe: exit 2, no hang", async () => {
    const file = fifo(join(sandbox.dir, "other.json"));
    expect(await runQuickly(["--config", file, "providers", "list"])).toEqual({
      code: 2,
      stdout: "",
      stderr: `uuldana: cannot read config ${file}: it is a named pipe (FIFO), not a file [E_CONFIG_UNREADABLE]\nhint: give --config a JSON file; replace it with a regular file, or remove it\n`,
    });
  });
});

describe("manifests that are not files", () => {
  it("a drop-in manifest that is a named pipe is reported, and the others still load", async () => {
    const file = fifo(join(sandbox.config, "providers", "x.json"));
    sandbox.write("config/providers/alpha.json", standInManifest("alpha"));
    sandbox.write("config/config.json", { providers: ["alpha"], auto_detect: false });
    const run = await runQuickly(["providers", "list"]);
    expect(run.code).toBe(0);
    expect(run.stdout.split("\n")[1]).toMatch(/^1  alpha /);
    expect(run.stderr).toBe(`uuldana: cannot read manifest ${file}: it is a named pipe (FIFO), not a file [E_MANIFEST_UNREADABLE]\nhint: a manifest is a .json file: replace it with a regular file, or remove it\n`);
    expect(await runQuickly(["providers", "validate", file])).toEqual({ code: 1, stdout: "", stderr: run.stderr });
  });

  it("providers validate names a folder called x.json that holds no manifest, and a folder inside one", async () => {
    const folder = join(sandbox.dir, "x.json");
    mkdirSync(folder);
    expect(await runQuickly(["providers", "validate", folder])).toEqual({
      code: 2,
      stdout: "",
      stderr: `uuldana: no manifest files found in ${folder}: it is a folder with no .json files in it [E_USAGE]\nhint: name manifest files, or folders that hold them\n`,
    });
    mkdirSync(join(folder, "y.json"));
    expect(await runQuickly(["providers", "validate", folder])).toEqual({
      code: 1,
      stdout: "",
      stderr: `uuldana: cannot read manifest ${join(folder, "y.json")}: it is a folder, not a file [E_MANIFEST_UNREADABLE]\nhint: a manifest is a .json file: replace it with a regular file, or remove it\n`,
    });
  });

  it("a pack whose package.json is a named pipe is reported by name", async () => {
    mkdirSync(join(sandbox.dir, "pack"));
    const file = fifo(join(sandbox.dir, "pack", "package.json"));
    sandbox.write("config/config.json", { auto_detect: false, packs: ["../pack"] });
    const run = await runQuickly(["providers", "list"]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(`uuldana: provider pack "../pack" cannot be read: ${file} is a named pipe (FIFO), not a file [E_PACK_UNREADABLE]\nhint: a pack is an npm package whose package.json has "uuldana": {"manifests": [...]}\n`);
  });

  it("a probe cache that is a named pipe is only a cache: listing works", async () => {
    fifo(join(sandbox.cache, "probes.json"));
    const run = await runQuickly(["providers", "list", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([]);
  });
});

describe("a project config that is not a file", () => {
  it.each([".uuldanarc.json", "package.json"])("%s as a named pipe: exit 2 naming it, no hang", async (name) => {
    const file = fifo(join(sandbox.project, name));
    expect(await runQuickly(["providers", "list"])).toEqual({
      code: 2,
      stdout: "",
      stderr: `uuldana: cannot read project config ${file}: it is a named pipe (FIFO), not a file [E_CONFIG_UNREADABLE]\nhint: a project config must be a JSON or YAML file: replace it with a regular file, or remove it\n`,
    });
  });

  it("refuses $import, which would make uuldana read other files", async () => {
    const file = sandbox.write("project/.uuldanarc.json", { $import: "/dev/zero", ceiling: "read-only" });
    expect(await runQuickly(["providers", "list"])).toEqual({
      code: 2,
      stdout: "",
      stderr: `uuldana: invalid project config ${file}: "$import" is not supported [E_CONFIG_INVALID]\nhint: a project config is read on its own; put the settings in this file\n`,
    });
  });
});

describe("cooldowns.json that is not a file", () => {
  const table = (): string => join(sandbox.data, "cooldowns.json");
  const hint = (): string => `remove it (rm -r ${table()}); uuldana writes a new table at the next rest`;

  it.each([
    ["a named pipe", () => fifo(table()), "is a named pipe (FIFO), not a file"],
    ["a folder", () => mkdirSync(table()), "is a folder, not a file"],
  ])("as %s: cooldowns and cooldowns clear exit 2, providers list warns, a write leaves no temporary file", async (_, make, what) => {
    make();
    const error = { code: 2, stdout: "", stderr: `uuldana: the cooldown table ${table()} ${what} [E_COOLDOWNS_UNREADABLE]\nhint: ${hint()}\n` };
    expect(await runQuickly(["cooldowns"])).toEqual(error);
    expect(await runQuickly(["cooldowns", "clear"])).toEqual(error);
    // --json: the error is the output too
    const json = { error: { code: "E_COOLDOWNS_UNREADABLE", message: `the cooldown table ${table()} ${what}`, details: [], hint: hint(), cause: [] } };
    expect(await runQuickly(["cooldowns", "list", "--json"])).toEqual({ ...error, stdout: JSON.stringify(json, null, 2) + "\n" });
    const list = await runQuickly(["providers", "list"]);
    expect(list.code).toBe(0);
    expect(list.stderr).toBe(`warning: the cooldown table ${table()} ${what}; no entry is treated as resting, and no rest can be written until it is fixed: ${hint()}\n`);
    const write = await updateCooldowns(sandbox.data, (entries) => void entries.set("codex", row("2999-01-01T00:00:00Z")));
    expect(write).toEqual({ written: false, notice: `the cooldown table ${table()} ${what}; it cannot be written: ${hint()}` });
    expect(readdirSync(sandbox.data)).toEqual(["cooldowns.json"]);
  });

  it("as a named pipe never blocks a run: the warning is said and the agent starts", async () => {
    installAgents(sandbox, ["line"]);
    fifo(table());
    const terminal = new TestTerminal(process.execPath, [bin, "run"], { cwd: sandbox.project, env: sandbox.env, cols: 300 });
    terminals.push(terminal);
    const screen = await terminal.waitFor("line agent ready");
    expect(screen[0]).toBe(`warning: the cooldown table ${table()} is a named pipe (FIFO), not a file; no entry is treated as resting, and no rest can be written until it is fixed: ${hint()}`);
    expect(screen[1]).toMatch(/^uuldana: starting line \(Stand-in line 1\.0\.0\) at ask/);
    terminal.type("/exit\r");
    expect((await terminal.exited).exitCode).toBe(0);
  });
});

describe("/agent on a config.json that is a link or not a file", () => {
  it("changes the file a link points at, and leaves the link a link", () => {
    const real = join(sandbox.dir, "dotfiles", "uuldana.json");
    mkdirSync(join(real, ".."));
    writeFileSync(real, JSON.stringify({ providers: ["codex", "claude-code"], ceiling: "ask" }));
    const link = join(sandbox.config, "config.json");
    symlinkSync(real, link);
    expect(changeOrder(link, "first", "claude-code")).toBe("providers: claude-code, codex");
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(real, "utf8"))).toEqual({ providers: ["claude-code", "codex"], ceiling: "ask" });
    expect(readdirSync(join(real, ".."))).toEqual(["uuldana.json"]);
  });

  it("says what is wrong with a named pipe, at once", () => {
    const file = fifo(join(sandbox.config, "config.json"));
    expect(changeOrder(file, "add", "codex")).toBe(`cannot change ${file}: it is a named pipe (FIFO), not a file`);
  });
});

describe("cooldowns clear with an entry uuldana does not know", () => {
  it("exits 2 naming the known entries: your list, installed providers auto-detect may add, and resting rows", async () => {
    await updateCooldowns(sandbox.data, (entries) => void entries.set("codex@o3", row("2999-01-01T00:00:00Z")));
    sandbox.write("config/config.json", { providers: ["claude-code", { id: "codex", name: "codex-work" }] });
    expect(await runQuickly(["cooldowns", "clear", "nosuch"])).toEqual({
      code: 2,
      stdout: "",
      stderr: 'uuldana: cooldowns clear nosuch: no entry has this key [E_USAGE]\n  entries: claude-code, codex-work, aider, antigravity, codex, copilot, cursor-agent, gemini, opencode, qwen, codex@o3\nhint: run "uuldana cooldowns" to see which entries are resting\n',
    });
    sandbox.write("config/config.json", { providers: ["claude-code"], auto_detect: false });
    expect((await runQuickly(["cooldowns", "clear", "codex"])).stderr).toBe(
      'uuldana: cooldowns clear codex: no entry has this key [E_USAGE]\n  entries: claude-code, codex@o3\nhint: run "uuldana cooldowns" to see which entries are resting\n',
    );
    expect(await runQuickly(["cooldowns", "clear", "claude-code"])).toEqual({ code: 0, stdout: "claude-code was not resting.\n", stderr: "" });
    expect(await runQuickly(["cooldowns", "clear", "codex@o3"])).toEqual({ code: 0, stdout: "Cleared: codex@o3.\n", stderr: "" });
  });
});

describe("a key given twice", () => {
  const why = "JSON keeps only the last, so uuldana does not guess which you meant";

  it("in config.json: exit 2 with both places", async () => {
    const file = sandbox.write("config/config.json", '{\n  "ceiling": "ask",\n  "failover": true,\n  "ceiling": "full-access"\n}\n');
    expect(await runQuickly(["providers", "list"])).toEqual({
      code: 2,
      stdout: "",
      stderr: `uuldana: ${file}:4:3: duplicate key "ceiling" [E_JSON_DUPLICATE_KEY]\n  at /ceiling: given at 2:3 and again at 4:3; ${why}\nhint: keep one of the two "ceiling" keys and remove the other\n`,
    });
  });

  it("deep inside config.json, written the same way twice", async () => {
    const file = sandbox.write("config/config.json", '{"providers": [{"id": "codex", "env": {"CODEX_HOME": "~/a", "CODEX_\\u0048OME": "~/b"}}]}');
    expect((await runQuickly(["providers", "list"])).stderr).toBe(
      `uuldana: ${file}:1:61: duplicate key "CODEX_HOME" [E_JSON_DUPLICATE_KEY]\n  at /providers/0/env/CODEX_HOME: given at 1:40 and again at 1:61; ${why}\nhint: keep one of the two "CODEX_HOME" keys and remove the other\n`,
    );
  });

  it("in a project config, and in a project package.json only under its uuldana key", async () => {
    const rc = sandbox.write("project/.uuldanarc.json", '{"ceiling": "read-only", "ceiling": "ask"}');
    expect((await runQuickly(["providers", "list"])).stderr).toBe(
      `uuldana: ${rc}:1:26: duplicate key "ceiling" [E_JSON_DUPLICATE_KEY]\n  at /ceiling: given at 1:2 and again at 1:26; ${why}\nhint: keep one of the two "ceiling" keys and remove the other\n`,
    );
    const folder = join(sandbox.project, "app");
    mkdirSync(folder);
    const pkg = join(folder, "package.json");
    writeFileSync(pkg, '{"name": "a", "name": "b", "uuldana": {"failover": false}}');
    expect((await runQuickly(["providers", "list"], { cwd: folder })).code).toBe(0);
    writeFileSync(pkg, '{"name": "a", "uuldana": {"failover": false, "failover": true}}');
    expect((await runQuickly(["providers", "list"], { cwd: folder })).stderr).toBe(
      `uuldana: ${pkg}:1:46: duplicate key "failover" [E_JSON_DUPLICATE_KEY]\n  at /uuldana/failover: given at 1:27 and again at 1:46; ${why}\nhint: keep one of the two "failover" keys and remove the other\n`,
    );
  });

  it("in a manifest, and in a pack's package.json under uuldana", async () => {
    const manifest = join(sandbox.dir, "dup.json");
    writeFileSync(manifest, JSON.stringify(standInManifest("dup"), null, 2).replace('"name": "Stand-in dup",', '"name": "Stand-in dup",\n  "id": "other",'));
    expect(await runQuickly(["providers", "validate", manifest])).toEqual({
      code: 1,
      stdout: "",
      stderr: `uuldana: ${manifest}:4:3: duplicate key "id" [E_JSON_DUPLICATE_KEY]\n  at /id: given at 2:3 and again at 4:3; ${why}\nhint: keep one of the two "id" keys and remove the other\n`,
    });
    sandbox.write("pack/package.json", '{"name": "p", "uuldana": {"manifests": ["a"], "manifests": ["b"]}}');
    sandbox.write("config/config.json", { auto_detect: false, packs: ["../pack"] });
    expect((await runQuickly(["providers", "list"])).stderr).toBe(
      `uuldana: ${join(sandbox.dir, "pack", "package.json")}:1:47: duplicate key "manifests" [E_JSON_DUPLICATE_KEY]\n  at /uuldana/manifests: given at 1:27 and again at 1:47; ${why}\nhint: keep one of the two "manifests" keys and remove the other\n`,
    );
  });

  it("in cooldowns.json (uuldana's own file): a warning with both places, the longer rest used, one row after the next write", async () => {
    const file = sandbox.write(
      "data/cooldowns.json",
      '{"version": 1, "entries": {\n  "codex": {"until": "2999-01-01T00:00:00.000Z", "source": "inferred"},\n  "codex": {"until": "2998-01-01T00:00:00.000Z", "source": "manual"}\n}}\n',
    );
    const warning = `${file}: the entry "codex" has two rows, at 2:3 and 3:3; the longer rest is used`;
    const list = await runQuickly(["cooldowns", "--json"]);
    expect(list.stderr).toBe(`warning: ${warning}, and the next write keeps one\n`);
    expect(JSON.parse(list.stdout)).toEqual([{ entry: "codex", account: "codex", until: "2999-01-01T00:00:00.000Z", since: null, source: "inferred", kind: null, text: null }]);
    const write = await updateCooldowns(sandbox.data, (entries) => void entries.set("gemini", row("2999-01-01T00:00:00Z")));
    expect(write).toEqual({ written: true, notice: `${warning}; the table now has one` });
    expect((await readCooldowns(sandbox.data)).problem).toBeUndefined();
    expect(Object.keys(JSON.parse(readFileSync(file, "utf8")).entries)).toEqual(["codex", "gemini"]);
  });
});

describe("uuldana's folders that are files", () => {
  it.each([
    [["run"], "uuldana: <data>/sessions cannot be made: <data> is a file, not a folder: uuldana keeps its sessions in this folder [E_SESSIONS_FOLDER_UNUSABLE]\nhint: move it away (mv \"<data>\" \"<data>.old\"), or set UULDANA_DATA_DIR to a folder\n"],
    [["sessions"], "uuldana: <data>/sessions cannot be made: <data> is a file, not a folder: uuldana keeps its sessions in this folder [E_SESSIONS_FOLDER_UNUSABLE]\nhint: move it away (mv \"<data>\" \"<data>.old\"), or set UULDANA_DATA_DIR to a folder\n"],
    [["cooldowns", "clear"], "uuldana: the cooldown table <data>/cooldowns.json cannot be reached: <data> on its path is a file, not a folder [E_COOLDOWNS_UNREADABLE]\nhint: move <data> away, or point uuldana at another folder\n"],
  ])("the data folder as a file: %j names it and the fix, exit 2", async (args, stderr) => {
    installAgents(sandbox);
    const data = join(sandbox.dir, "data-file");
    writeFileSync(data, "not a folder\n");
    const run = await sandbox.run(args, { env: { UULDANA_DATA_DIR: data } });
    expect(run).toEqual({ code: 2, stdout: "", stderr: stderr.replaceAll("<data>", data) });
  });

  it("the config folder as a file: names it and the fix, exit 2", async () => {
    const config = join(sandbox.dir, "config-file");
    writeFileSync(config, "not a folder\n");
    const run = await sandbox.run(["providers", "list"], { env: { UULDANA_CONFIG_DIR: config } });
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr: `uuldana: cannot read config ${config}/config.json: it cannot be reached: ${config} on its path is a file, not a folder [E_CONFIG_UNREADABLE]\nhint: move ${config} away, or point uuldana at another folder\n`,
    });
  });
});

describe("temporary files a killed uuldana left", () => {
  // a pid no process has, and this test's own (a writer still at work)
  const dead = 2 ** 22 + 12345;
  it("are removed beside config.json by the next /agent change, while a live writer's stays", () => {
    const file = sandbox.write("config/config.json", { providers: ["codex", "gemini"] });
    writeFileSync(`${file}.${dead}.tmp`, "{");
    writeFileSync(`${file}.${process.ppid}.tmp`, "{");
    expect(changeOrder(file, "first", "gemini")).toBe("providers: gemini, codex");
    expect(readdirSync(join(sandbox.config)).sort()).toEqual(["config.json", `config.json.${process.ppid}.tmp`]);
  });

  it("are removed from a session's folder when its journal is opened again", () => {
    const folder = join(sandbox.data, "sessions", "0zz00000t1");
    new Journal(sandbox.data, "0zz00000t1").close();
    writeFileSync(join(folder, `conversation-1.txt.${dead}.tmp`), "half");
    writeFileSync(join(folder, `prompt-1.txt.${process.ppid}.tmp`), "being written");
    new Journal(sandbox.data, "0zz00000t1").close();
    expect(readdirSync(folder).sort()).toEqual(["journal.jsonl", `prompt-1.txt.${process.ppid}.tmp`]);
  });
});

describe("a read bounded in size", () => {
  it("takes a file of exactly the bound, and refuses one byte more naming the file, as it refuses a named pipe", async () => {
    const file = sandbox.write("package.json", "a".repeat(10));
    expect(await readRegularFile(file, 10)).toBe("a".repeat(10));
    writeFileSync(file, "a".repeat(11));
    await expect(readRegularFile(file, 10)).rejects.toThrow(`${file} is larger than 10 bytes`);
    await expect(readRegularFile(fifo(join(sandbox.dir, "pipe.json")), 10)).rejects.toThrow(`${join(sandbox.dir, "pipe.json")} is a named pipe (FIFO), not a file`);
  });
});
