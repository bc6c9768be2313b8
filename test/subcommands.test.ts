import { afterAll, describe, expect, it } from "vitest";

import { makeSandbox } from "./helpers.js";

const sandbox = makeSandbox();
afterAll(() => sandbox.cleanup());
const usage = ' [E_USAGE]\nhint: run "uuldana --help" for usage\n';

describe("a word that names no command of providers, sessions or cooldowns", () => {
  it.each([
    [["providers", "frob"], 'uuldana: unknown command "frob" for "providers"; its commands: list, validate, add, remove'],
    [["sessions", "frob"], 'uuldana: unknown command "frob" for "sessions"; its commands: list, show, stop'],
    [["cooldowns", "frob"], 'uuldana: unknown command "frob" for "cooldowns"; its commands: list, clear'],
    [["providers", "frob", "--json"], 'uuldana: unknown command "frob" for "providers"; its commands: list, validate, add, remove'],
    [["sessions", "--json", "frob"], 'uuldana: unknown command "frob" for "sessions"; its commands: list, show, stop'],
    [["providers", "list", "frob"], 'uuldana: unexpected argument "frob" for "providers list", which takes none'],
    [["cooldowns", "--json", "list", "frob"], 'uuldana: unexpected argument "frob" for "cooldowns list", which takes none'],
    [["providers", "--json", "validate", "x.json"], 'uuldana: "validate" must come right after "providers", before any option'],
  ])("%j is a usage error that names the word", async (args, stderr) => {
    expect(await sandbox.run(args)).toEqual({ code: 2, stdout: "", stderr: stderr + usage });
  });
});

describe("list, the default command", () => {
  it.each([
    [["providers"], `No providers: none is listed in ${sandbox.config}/config.json and none is installed.\n`],
    [["providers", "--json"], "[]\n"],
    [["providers", "--json", "list"], "[]\n"],
    [["providers", "list", "--json"], "[]\n"],
    [["sessions"], "No sessions yet.\n"],
    [["sessions", "--json"], "[]\n"],
    [["cooldowns"], "No entry is resting.\n"],
    [["cooldowns", "list", "--json"], "[]\n"],
  ])("still runs for %j", async (args, stdout) => {
    sandbox.write("config/config.json", { auto_detect: false });
    expect(await sandbox.run(args)).toEqual({ code: 0, stdout, stderr: "" });
  });
});
