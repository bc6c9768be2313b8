import { join, resolve } from "node:path";

import type { Command } from "commander";

import { resolveDirs } from "../base/paths.js";
import { closestWord } from "../base/suggest.js";
import { result, type CommandResult } from "./result.js";

// uuldana config and its commands as the program registers them; what get, set, unset and edit do is in
// config-command.ts, loaded when one of them runs.

// The config group. Its commands read the file themselves, never the merged config: they work on a file a run
// would refuse, to show it or to mend it.
export function addConfigCommands(program: Command, { done }: { done: (result: CommandResult) => void }): void {
  const file = (): string => resolve(program.opts<{ config?: string }>().config ?? join(resolveDirs().config, "config.json"));
  const config = program.command("config").description("show and change the settings of your config.json (or the --config file)").addHelpCommand(false).exitOverride();
  config
    .command("path")
    .description("print the path of the config file in use, whether it exists or not")
    .exitOverride()
    .action(() => done(result(`${file()}\n`)));
  config
    .command("get")
    .description("print a setting's value as JSON, uuldana's default when the file does not set it; no key: the whole file")
    .argument("[key]", "the setting")
    .exitOverride()
    .action(async (key: string | undefined) => done((await import("./config-command.js")).getSetting(file(), key)));
  config
    .command("set")
    .description("give a setting a value (read as JSON when it is JSON, else as a string); the file is written only when it stays valid")
    .argument("<key>", "the setting")
    .argument("<value>", "its value")
    .exitOverride()
    .action(async (key: string, value: string) => done((await import("./config-command.js")).setSetting(file(), key, value)));
  config
    .command("unset")
    .description("take a setting out of the file, so uuldana uses its default")
    .argument("<key>", "the setting")
    .exitOverride()
    .action(async (key: string) => done((await import("./config-command.js")).unsetSetting(file(), key)));
  config
    .command("edit")
    .description("edit the file in $VISUAL, else $EDITOR, else vi; it replaces the file once it is valid")
    .exitOverride()
    .action(async () => done((await import("./config-command.js")).editConfig(file(), process.env)));
  // no command, or a word that names none: said as the other groups say it, with the group's commands
  config.allowExcessArguments(true).action((_options: unknown, group: Command) => {
    const names = group.commands.map((command) => command.name());
    const word = group.args[0];
    const near = word === undefined ? undefined : closestWord(word, names);
    const message = word === undefined ? `"config" needs a command: ${names.join(", ")}` : `unknown command "${word}" for "config"; its commands: ${names.join(", ")}`;
    group.error(near ? `${message}\n(Did you mean ${near}?)` : message, { code: "commander.unknownCommand", exitCode: 2 });
  });
}
