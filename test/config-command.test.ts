import { existsSync, lstatSync, readdirSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";

import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { fixtures, makeSandbox, root, type Sandbox } from "./helpers.js";

// uuldana config path, get, set, unset and edit, run as a user runs them on a scratch config dir: exact output and
// exit codes, and the file byte for byte after each.

let sandbox: Sandbox;
let file: string;
beforeEach(() => {
  sandbox = makeSandbox();
  file = join(sandbox.config, "config.json");
});
afterEach(() => sandbox.cleanup());

const usage = 'hint: run "uuldana --help" for usage\n';
const read = (): string => readFileSync(file, "utf8");
const mode = (path: string): string => (statSync(path).mode & 0o777).toString(8);
// the editor of the tests, as EDITOR or VISUAL name it: node and its script, then what it is to do
const editor = (...what: string[]): string => ["node", join(fixtures, "editor.mjs"), ...what].join(" ");

describe("uuldana config path", () => {
  it("prints the config.json in the config dir, whether it exists, is broken or not there", async () => {
    expect(await sandbox.run(["config", "path"])).toEqual({ code: 0, stdout: `${file}\n`, stderr: "" });
    sandbox.write("config/config.json", '{"ceiling": ');
    expect(await sandbox.run(["config", "path"])).toEqual({ code: 0, stdout: `${file}\n`, stderr: "" });
  });

  it("prints the --config file, made absolute from the current folder", async () => {
    expect(await sandbox.run(["--config", "work.json", "config", "path"])).toEqual({ code: 0, stdout: `${join(sandbox.project, "work.json")}\n`, stderr: "" });
  });
});

describe("uuldana config get", () => {
  it("prints a setting the file gives as JSON, indented when it is a list or an object", async () => {
    sandbox.write("config/config.json", { ceiling: "auto-edit", quiet_seconds: 3, providers: ["codex", { id: "claude-code", name: "work" }] });
    expect(await sandbox.run(["config", "get", "ceiling"])).toEqual({ code: 0, stdout: '"auto-edit"\n', stderr: "" });
    expect(await sandbox.run(["config", "get", "quiet_seconds"])).toEqual({ code: 0, stdout: "3\n", stderr: "" });
    const providers = '[\n  "codex",\n  {\n    "id": "claude-code",\n    "name": "work"\n  }\n]\n';
    expect(await sandbox.run(["config", "get", "providers"])).toEqual({ code: 0, stdout: providers, stderr: "" });
  });

  it("prints uuldana's default for a setting the file does not give, the one the schema's description names", async () => {
    sandbox.write("config/config.json", { ceiling: "ask" });
    const schema = JSON.parse(readFileSync(join(root, "schemas", "config.schema.json"), "utf8")) as { properties: Record<string, { description: string }> };
    const keys = Object.keys(schema.properties).filter((key) => key !== "ceiling");
    expect(keys.length).toBe(22);
    for (const key of keys) {
      const named = /\(default ([^;)]+)[;)]/.exec(schema.properties[key]!.description)?.[1];
      const run = await sandbox.run(["config", "get", key]);
      if (named === "off" || named === "none" || key === "$schema") {
        expect(run, key).toEqual({ code: 0, stdout: "", stderr: `note: "${key}" is not set in ${file}, and has no default\n` });
        continue;
      }
      // the lists start empty (providers: auto_detect adds the installed agents)
      const shown = named === undefined ? "[]" : JSON.stringify(JSON.parse(named));
      expect(run, key).toEqual({ code: 0, stdout: `${shown}\n`, stderr: `note: "${key}" is not set in ${file}; this is uuldana's default\n` });
    }
  });

  it("prints the whole file with no key, {} when there is none", async () => {
    expect(await sandbox.run(["config", "get"])).toEqual({ code: 0, stdout: "{}\n", stderr: `note: ${file} does not exist; uuldana uses its defaults\n` });
    sandbox.write("config/config.json", '{"$schema": "config.schema.json",\n\t"wait": true}');
    expect(await sandbox.run(["config", "get"])).toEqual({ code: 0, stdout: '{\n  "$schema": "config.schema.json",\n  "wait": true\n}\n', stderr: "" });
  });

  it("says where a file that is not JSON goes wrong, exit 2", async () => {
    sandbox.write("config/config.json", '{\n  "ceiling": \n}\n');
    expect(await sandbox.run(["config", "get", "ceiling"])).toEqual({
      code: 2,
      stdout: "",
      stderr: `uuldana: ${file}:3:1: invalid JSON [E_JSON_SYNTAX]\n  Unexpected token '}'\nhint: fix the JSON syntax at that line and column (a missing comma, quote or bracket is the usual cause)\n`,
    });
  });
});

describe("uuldana config get and set with the shared store's address", () => {
  const address = "redis://team:s3cret-pw@rests.example:6380/2";
  const note = "note: shared_rests is shown with its credentials as ***; the file holds them\n";

  it("show its credentials as ***, while the file keeps them", async () => {
    sandbox.write("config/config.json", { ceiling: "ask", shared_rests: address });
    expect(await sandbox.run(["config", "get", "shared_rests"])).toEqual({ code: 0, stdout: '"redis://***:***@rests.example:6380/2"\n', stderr: note });
    expect(await sandbox.run(["config", "get"])).toEqual({ code: 0, stdout: '{\n  "ceiling": "ask",\n  "shared_rests": "redis://***:***@rests.example:6380/2"\n}\n', stderr: note });
    expect(JSON.parse(read()).shared_rests).toBe(address);
  });

  it("say what was set without the password, and write it whole", async () => {
    sandbox.write("config/config.json", {});
    expect(await sandbox.run(["config", "set", "shared_rests", "rediss://:only-pw@store.example"])).toEqual({
      code: 0,
      stdout: `set "shared_rests" to "rediss://:***@store.example" in ${file}\n`,
      stderr: "",
    });
    expect(JSON.parse(read()).shared_rests).toBe("rediss://:only-pw@store.example");
    expect(await sandbox.run(["config", "get", "shared_rests"])).toEqual({ code: 0, stdout: '"rediss://:***@store.example"\n', stderr: note });
  });

  it("show an address without credentials as it is, with no note", async () => {
    sandbox.write("config/config.json", { shared_rests: "redis://rests.example" });
    expect(await sandbox.run(["config", "get", "shared_rests"])).toEqual({ code: 0, stdout: '"redis://rests.example"\n', stderr: "" });
  });
});

describe("uuldana config set", () => {
  it("reads the value as JSON when it is JSON, else as a string, and creates the config dir (0700) and file (0600)", async () => {
    const missing = join(sandbox.dir, "fresh", "uuldana");
    const env = { UULDANA_CONFIG_DIR: missing };
    const fresh = join(missing, "config.json");
    expect(await sandbox.run(["config", "set", "ceiling", "auto-edit"], { env })).toEqual({ code: 0, stdout: `set "ceiling" to "auto-edit" in ${fresh}\n`, stderr: "" });
    expect(await sandbox.run(["config", "set", "quiet_seconds", "3"], { env })).toEqual({ code: 0, stdout: `set "quiet_seconds" to 3 in ${fresh}\n`, stderr: "" });
    expect(await sandbox.run(["config", "set", "failover", "false"], { env })).toEqual({ code: 0, stdout: `set "failover" to false in ${fresh}\n`, stderr: "" });
    expect(await sandbox.run(["config", "set", "providers", '["codex","claude-code"]'], { env })).toEqual({ code: 0, stdout: `set "providers" to ["codex","claude-code"] in ${fresh}\n`, stderr: "" });
    expect(await sandbox.run(["config", "set", "command_key", '"ctrl-g"'], { env })).toEqual({ code: 0, stdout: `set "command_key" to "ctrl-g" in ${fresh}\n`, stderr: "" });
    expect(readFileSync(fresh, "utf8")).toBe(
      '{\n  "ceiling": "auto-edit",\n  "quiet_seconds": 3,\n  "failover": false,\n  "providers": [\n    "codex",\n    "claude-code"\n  ],\n  "command_key": "ctrl-g"\n}\n',
    );
    expect([mode(missing), mode(fresh)]).toEqual(["700", "600"]);
    // only the file itself: no copy or temporary is left beside it
    expect(readdirSync(missing)).toEqual(["config.json"]);
  });

  it("keeps the file's indentation, $schema, key order and the way every other value is written; a new key goes last", async () => {
    sandbox.write("config/config.json", '{\n    "$schema": "../schemas/config.schema.json",\n    "providers": ["codex", {"id": "claude-code", "name": "work"}],\n    "ceiling": "ask",\n    "wait": true\n}\n', 0o644);
    expect((await sandbox.run(["config", "set", "ceiling", "read-only"])).code).toBe(0);
    expect((await sandbox.run(["config", "set", "packs", '["uuldana-provider-acme"]'])).code).toBe(0);
    expect(read()).toBe(
      '{\n    "$schema": "../schemas/config.schema.json",\n    "providers": ["codex", {"id": "claude-code", "name": "work"}],\n    "ceiling": "read-only",\n    "wait": true,\n    "packs": [\n        "uuldana-provider-acme"\n    ]\n}\n',
    );
    expect(mode(file)).toBe("600");
    sandbox.write("config/config.json", '{\n\t"wait": true\n}\n');
    expect((await sandbox.run(["config", "set", "redact", '["token-[0-9]+"]'])).code).toBe(0);
    expect(read()).toBe('{\n\t"wait": true,\n\t"redact": [\n\t\t"token-[0-9]+"\n\t]\n}\n');
    // a file on one line stays on one line
    sandbox.write("config/config.json", '{"wait":true}');
    expect((await sandbox.run(["config", "set", "ceiling", "ask"])).code).toBe(0);
    expect(read()).toBe('{"wait":true, "ceiling":"ask"}');
  });

  it("writes nothing when the setting has that value already", async () => {
    sandbox.write("config/config.json", '{ "quiet_seconds": 3.0 }');
    expect(await sandbox.run(["config", "set", "quiet_seconds", "3"])).toEqual({ code: 0, stdout: `"quiet_seconds" is 3 in ${file} already; nothing changed\n`, stderr: "" });
    expect(read()).toBe('{ "quiet_seconds": 3.0 }');
  });

  it("refuses a value the schema does not allow, exit 2, the file byte for byte as it was", async () => {
    const text = '{\n  "ceiling": "ask"\n}\n';
    sandbox.write("config/config.json", text);
    expect(await sandbox.run(["config", "set", "ceiling", "everything"])).toEqual({
      code: 2,
      stdout: "",
      stderr: [
        `uuldana: cannot set "ceiling" to "everything" in ${file} (1 problem) [E_CONFIG_INVALID]`,
        "  at /ceiling (ceiling): is not one of the allowed values",
        '    value: "everything"',
        '    allowed: "read-only", "ask", "auto-edit", "full-access"',
        `    hint: The most a session's agents may do without asking (default "ask").`,
        'hint: give "ceiling" a value as the lines above say; the file is unchanged',
        "",
      ].join("\n"),
    });
    expect(read()).toBe(text);
  });

  it("refuses what loading refuses beyond the schema, in its words: two entries with one key, a pattern that is no regular expression", async () => {
    sandbox.write("config/config.json", "{}\n");
    const duplicate = await sandbox.run(["config", "set", "providers", '["codex", {"id": "codex"}]']);
    expect(duplicate).toEqual({
      code: 2,
      stdout: "",
      stderr: [
        `uuldana: cannot set "providers" to ["codex",{"id":"codex"}] in ${file}: two entries would have the key "codex" [E_CONFIG_DUPLICATE_ENTRY]`,
        '  at /providers/1 (providers[1]): "codex" is already the key of providers[0]',
        '    value: {"id":"codex"}',
        '    hint: The entry\'s own name, needed when the same provider is listed twice (for example "claude-work").',
        'hint: give one of them its own "name", for example {"id": "codex", "name": "codex-2"}; the file is unchanged',
        "",
      ].join("\n"),
    });
    const pattern = await sandbox.run(["config", "set", "redact", '["(unclosed"]']);
    expect(pattern.code).toBe(2);
    expect(pattern.stderr).toBe(
      [
        `uuldana: cannot set "redact" to ["(unclosed"] in ${file} (1 problem) [E_CONFIG_INVALID]`,
        "  at /redact/0 (redact[0]): is not a valid regular expression (/(unclosed/g: Unterminated group)",
        '    value: "(unclosed"',
        "    allowed: a JavaScript regular expression",
        "    hint: Regular expressions whose matches are replaced by [redacted] in everything a session journal keeps (entries' env values always are).",
        'hint: give "redact" a value as the lines above say; the file is unchanged',
        "",
      ].join("\n"),
    );
    expect(read()).toBe("{}\n");
    // a run refuses the same values with the same problem lines
    sandbox.write("config/config.json", { providers: ["codex", { id: "codex" }] });
    const run = await sandbox.run(["providers", "list"]);
    expect(run.stderr.split("\n").slice(1)).toEqual(duplicate.stderr.split("\n").slice(1).map((line) => line.replace("; the file is unchanged", "")));
  });

  it("never writes into a file that is not valid already: it says what to mend, exit 2", async () => {
    const text = '{\n  "ceiling": "everything",\n  "wait": true\n}\n';
    sandbox.write("config/config.json", text);
    expect(await sandbox.run(["config", "set", "wait", "false"])).toEqual({
      code: 2,
      stdout: "",
      stderr: [
        `uuldana: cannot set "wait": invalid config ${file} (1 problem) [E_CONFIG_INVALID]`,
        "  at /ceiling (ceiling): is not one of the allowed values",
        '    value: "everything"',
        '    allowed: "read-only", "ask", "auto-edit", "full-access"',
        `    hint: The most a session's agents may do without asking (default "ask").`,
        'hint: uuldana writes no change into a file it would refuse: mend it first ("uuldana config edit" opens it)',
        "",
      ].join("\n"),
    });
    expect((await sandbox.run(["config", "unset", "wait"])).code).toBe(2);
    expect(read()).toBe(text);
    sandbox.write("config/config.json", '{"wait": true,}');
    expect(await sandbox.run(["config", "set", "wait", "false"])).toEqual({
      code: 2,
      stdout: "",
      stderr: `uuldana: cannot set "wait": ${file}:1:15: invalid JSON [E_JSON_SYNTAX]\n  Expected double-quoted property name\nhint: fix the JSON syntax at that line and column (a missing comma, quote or bracket is the usual cause); uuldana writes no change into a file it would refuse: mend it first ("uuldana config edit" opens it)\n`,
    });
    expect(read()).toBe('{"wait": true,}');
  });

  it("names the setting meant for one it does not know, or lists them all", async () => {
    sandbox.write("config/config.json", "{}\n");
    expect(await sandbox.run(["config", "set", "celing", "ask"])).toEqual({ code: 2, stdout: "", stderr: 'uuldana: "celing" is not a setting uuldana knows [E_USAGE]\nhint: did you mean "ceiling"?\n' });
    expect(await sandbox.run(["config", "get", "quiet_second"])).toEqual({ code: 2, stdout: "", stderr: 'uuldana: "quiet_second" is not a setting uuldana knows [E_USAGE]\nhint: did you mean "quiet_seconds"?\n' });
    const all =
      "$schema, providers, failover, auto_detect, cooldown_minutes, ceiling, quiet_seconds, dismiss_seconds, command_key, scrollback, rotate_at_percent_left, handoff_workspace, receiver_seconds, wait, wait_max_hours, return_home, notify, notify_command, paid_usage, packs, replaces, shared_rests, redact";
    expect(await sandbox.run(["config", "unset", "colour"])).toEqual({ code: 2, stdout: "", stderr: `uuldana: "colour" is not a setting uuldana knows [E_USAGE]\nhint: the settings are ${all}\n` });
    expect(read()).toBe("{}\n");
  });

  it("changes the file a linked config.json points at, and the --config file instead of config.json", async () => {
    const own = sandbox.write("dotfiles/uuldana.json", '{\n  "wait": true\n}\n');
    symlinkSync(own, file);
    expect((await sandbox.run(["config", "set", "wait", "false"])).code).toBe(0);
    expect(lstatSync(file).isSymbolicLink()).toBe(true);
    expect(readFileSync(own, "utf8")).toBe('{\n  "wait": false\n}\n');
    const other = join(sandbox.project, "work.json");
    expect(await sandbox.run(["--config", "work.json", "config", "set", "ceiling", "read-only"])).toEqual({ code: 0, stdout: `set "ceiling" to "read-only" in ${other}\n`, stderr: "" });
    expect(readFileSync(other, "utf8")).toBe('{\n  "ceiling": "read-only"\n}\n');
  });
});

describe("uuldana config unset", () => {
  it("takes the setting out and says which default is used now", async () => {
    sandbox.write("config/config.json", '{\n  "ceiling": "auto-edit",\n  "rotate_at_percent_left": 5,\n  "wait": true\n}\n');
    expect(await sandbox.run(["config", "unset", "ceiling"])).toEqual({ code: 0, stdout: `removed "ceiling" from ${file}; uuldana uses its default, "ask"\n`, stderr: "" });
    expect(await sandbox.run(["config", "unset", "wait"])).toEqual({ code: 0, stdout: `removed "wait" from ${file}; uuldana uses its default, false\n`, stderr: "" });
    expect(read()).toBe('{\n  "rotate_at_percent_left": 5\n}\n');
    expect(await sandbox.run(["config", "unset", "rotate_at_percent_left"])).toEqual({ code: 0, stdout: `removed "rotate_at_percent_left" from ${file}\n`, stderr: "" });
    expect(read()).toBe("{}\n");
  });

  it("says so for a setting the file does not give, and leaves it untouched (or not there)", async () => {
    sandbox.write("config/config.json", '{"wait": true}');
    expect(await sandbox.run(["config", "unset", "ceiling"])).toEqual({ code: 0, stdout: `"ceiling" is not set in ${file}; nothing changed\n`, stderr: "" });
    expect(read()).toBe('{"wait": true}');
    const missing = join(sandbox.dir, "none");
    expect(await sandbox.run(["config", "unset", "ceiling"], { env: { UULDANA_CONFIG_DIR: missing } })).toEqual({
      code: 0,
      stdout: `"ceiling" is not set in ${join(missing, "config.json")}; nothing changed\n`,
      stderr: "",
    });
    expect(existsSync(missing)).toBe(false);
  });
});

describe("uuldana config edit", () => {
  // the copies the editor was given: path and mode, one a line
  const record = (): string[] => readFileSync(join(sandbox.dir, "edits"), "utf8").split("\n").filter(Boolean);
  const edit = (env: Record<string, string>): ReturnType<Sandbox["run"]> => sandbox.run(["config", "edit"], { env: { EDIT_RECORD: join(sandbox.dir, "edits"), ...env } });

  it("edits a copy beside the file (0600) and puts it in place once it is valid", async () => {
    sandbox.write("config/config.json", '{\n  "wait": true\n}\n');
    expect(await edit({ EDITOR: editor("set", "ceiling", '"auto-edit"') })).toEqual({ code: 0, stdout: `wrote ${file}\n`, stderr: "" });
    expect(read()).toBe('{\n  "wait": true,\n  "ceiling": "auto-edit"\n}\n');
    const [copy, copyMode] = record()[0]!.split(" ");
    expect(copy).toMatch(new RegExp(`^${sandbox.config}/config\\.json\\.edit-[0-9a-f]{6}\\.json$`));
    expect(copyMode).toBe("600");
    expect(readdirSync(sandbox.config)).toEqual(["config.json"]);
    expect(mode(file)).toBe("600");
  });

  it("starts a file that does not exist yet from {}, and runs VISUAL before EDITOR", async () => {
    expect(await edit({ VISUAL: editor("set", "wait", "true"), EDITOR: "no-such-editor" })).toEqual({ code: 0, stdout: `wrote ${file}\n`, stderr: "" });
    expect(read()).toBe('{\n  "wait": true\n}\n');
    expect(await edit({ EDITOR: editor("keep") })).toEqual({ code: 0, stdout: `no change to ${file}\n`, stderr: "" });
    expect(readdirSync(sandbox.config)).toEqual(["config.json"]);
  });

  it("keeps an edit that is not valid in its copy, names it, and leaves the file as it was, exit 2", async () => {
    const text = '{\n  "wait": true\n}\n';
    sandbox.write("config/config.json", text);
    const run = await edit({ EDITOR: editor("set", "ceiling", '"everything"') });
    const copy = record()[0]!.split(" ")[0]!;
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr: [
        `uuldana: invalid config ${copy} (1 problem) [E_CONFIG_INVALID]`,
        "  at /ceiling (ceiling): is not one of the allowed values",
        '    value: "everything"',
        '    allowed: "read-only", "ask", "auto-edit", "full-access"',
        `    hint: The most a session's agents may do without asking (default "ask").`,
        `hint: ${file} is unchanged, and your edit is kept in ${copy}: mend it there and move it over ${file}, or remove it`,
        "",
      ].join("\n"),
    });
    expect(read()).toBe(text);
    expect(readFileSync(copy, "utf8")).toBe('{\n  "wait": true,\n  "ceiling": "everything"\n}\n');
    const broken = await edit({ EDITOR: editor("text", '"{\\"wait\\":"') });
    const second = record()[1]!.split(" ")[0]!;
    expect(broken.stderr).toBe(
      `uuldana: ${second}:1:9: invalid JSON [E_JSON_SYNTAX]\n  Unexpected end of JSON input\nhint: fix the JSON syntax at that line and column (a missing comma, quote or bracket is the usual cause); ${file} is unchanged, and your edit is kept in ${second}: mend it there and move it over ${file}, or remove it\n`,
    );
    expect(read()).toBe(text);
    expect(readdirSync(sandbox.config).sort()).toEqual(["config.json", copy.split("/").at(-1)!, second.split("/").at(-1)!].sort());
  });

  it("says a file saved with no change is still not valid, exit 2", async () => {
    sandbox.write("config/config.json", '{"ceiling": "everything"}');
    expect(await edit({ EDITOR: editor("keep") })).toEqual({
      code: 2,
      stdout: "",
      stderr: [
        `uuldana: invalid config ${file} (1 problem) [E_CONFIG_INVALID]`,
        "  at /ceiling (ceiling): is not one of the allowed values",
        '    value: "everything"',
        '    allowed: "read-only", "ask", "auto-edit", "full-access"',
        `    hint: The most a session's agents may do without asking (default "ask").`,
        `hint: you saved no change, so ${file} is as it was`,
        "",
      ].join("\n"),
    });
    expect(readdirSync(sandbox.config)).toEqual(["config.json"]);
  });

  it("says when the editor cannot start or fails, the file unchanged, exit 2", async () => {
    sandbox.write("config/config.json", "{}\n");
    expect(await edit({ EDITOR: "no-such-editor --wait" })).toEqual({
      code: 2,
      stdout: "",
      stderr: `uuldana: cannot start the editor "no-such-editor --wait": no no-such-editor was found [E_EDITOR]\nhint: set VISUAL or EDITOR to your editor's command (it runs without a shell); ${file} is unchanged\n`,
    });
    expect(readdirSync(sandbox.config)).toEqual(["config.json"]);
    const failed = await edit({ EDITOR: editor("exit", "3") });
    const copy = record()[0]!.split(" ")[0]!;
    expect(failed).toEqual({
      code: 2,
      stdout: "",
      stderr: `uuldana: the editor "${editor("exit", "3")}" exited with code 3 [E_EDITOR]\nhint: ${file} is unchanged; what you wrote is kept in ${copy}\n`,
    });
    expect(read()).toBe("{}\n");
  });
});

describe("uuldana config itself", () => {
  it.each([
    [["config"], 'uuldana: "config" needs a command: path, get, set, unset, edit [E_USAGE]\n' + usage],
    [["config", "nope"], 'uuldana: unknown command "nope" for "config"; its commands: path, get, set, unset, edit [E_USAGE]\n' + usage],
    [["config", "gte", "ceiling"], 'uuldana: unknown command "gte" for "config"; its commands: path, get, set, unset, edit [E_USAGE]\nhint: did you mean get?\n'],
  ])("%j is a usage error naming its commands", async (args, stderr) => {
    expect(await sandbox.run(args)).toEqual({ code: 2, stdout: "", stderr });
  });
});
