import { afterAll, describe, expect, it } from "vitest";

import { makeSandbox } from "./helpers.js";

const sandbox = makeSandbox();
afterAll(() => sandbox.cleanup());

// uuldana's own options, shown under every command's help
const GLOBAL_OPTIONS = /\nGlobal Options:\n {2}-V, --version +print the version\n {2}--config <file> +use this file instead of your config\.json\n/;

describe("uuldana help [command] [subcommand]", () => {
  it.each([
    [[], []],
    [["run"], ["run"]],
    [["providers", "add"], ["providers", "add"]],
    [["sessions"], ["sessions"]],
    [["cooldowns", "clear"], ["cooldowns", "clear"]],
    [["config"], ["config"]],
    [["config", "unset"], ["config", "unset"]],
    [["help"], ["help"]],
  ])("help %j prints what %j --help prints", async (words, command) => {
    const help = await sandbox.run(["help", ...words]);
    expect(help).toEqual(await sandbox.run([...command, "--help"]));
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("\nExamples:\n");
  });

  it("shows real command lines under Examples, each with what it does", async () => {
    const run = await sandbox.run(["help", "run"]);
    expect(run.stdout.slice(run.stdout.indexOf("Examples:"))).toBe(
      [
        "Examples:",
        "  uuldana run                                  # the first available entry, at the config's ceiling",
        "  uuldana run --provider codex                 # try codex first",
        "  uuldana run --ceiling read-only              # no agent may change anything without asking",
        "  uuldana run --ceiling auto-edit              # this session only: agents may edit files without asking",
        "  uuldana run --no-failover -- --model sonnet  # stay on the first agent; --model sonnet goes to it",
        "",
      ].join("\n"),
    );
  });

  it("ends uuldana's own help with its examples, then its files", async () => {
    const run = await sandbox.run(["help"]);
    const examples = run.stdout.slice(run.stdout.indexOf("Examples:"), run.stdout.indexOf("Files:"));
    expect(examples).toBe(
      [
        "Examples:",
        "  uuldana demo            # watch a failover between two stand-in agents",
        "  uuldana providers list  # the agents uuldana found, in the order it tries them",
        "  uuldana preflight       # check that each could take over now",
        "  uuldana run             # start the first available agent here",
        "  uuldana help run        # help for one command",
        "",
        "",
      ].join("\n"),
    );
  });

  it.each([["run"], ["explain"], ["resume"], ["report"], ["demo"], ["sessions", "list"], ["sessions", "show"], ["sessions", "stop"], ["cooldowns", "list"], ["providers", "list"], ["providers", "validate"], ["providers", "remove"], ["preflight"], ["config", "get"], ["config", "set"], ["config", "edit"], ["completion"]])(
    "shows the global options and examples under %j",
    async (...command) => {
      const run = await sandbox.run(["help", ...command]);
      expect(run.stdout).toMatch(GLOBAL_OPTIONS);
      expect(run.stdout).toMatch(new RegExp(`\\nExamples:\\n {2}(uuldana|eval "\\$\\(uuldana) ${command[0]}`));
    },
  );

  it.each([
    [["nope"], "uuldana: command-argument value 'nope' is invalid for argument 'command'. Allowed choices are run, explain, resume, report, demo, sessions, cooldowns, providers, preflight, config, completion, help. [E_USAGE]"],
    [["providers", "nope"], 'uuldana: "providers" has no command "nope"; its commands: list, validate, add, remove [E_USAGE]'],
    [["run", "nope"], 'uuldana: "run" has no commands [E_USAGE]'],
  ])("help %j is a usage error", async (words, line) => {
    expect(await sandbox.run(["help", ...words])).toEqual({ code: 2, stdout: "", stderr: `${line}\nhint: run "uuldana --help" for usage\n` });
  });
});
