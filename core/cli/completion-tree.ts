import type { Command, Option } from "commander";

import { schemaKeys } from "../base/schema.js";

// The shells uuldana writes a completion script for.
export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

// The values uuldana lists for a Tab press (uuldana completion --values KIND): read from files, never from agents.
export const LISTED_VALUES = ["entries", "sessions", "packs"] as const;
export type ListedValues = (typeof LISTED_VALUES)[number];

// What a word completes to: fixed words, values uuldana lists, file names, or nothing.
export type Completes =
  | { kind: "nothing" }
  | { kind: "words"; words: readonly string[] }
  | { kind: "listed"; values: ListedValues }
  | { kind: "files" };

export interface CompletionOption {
  // one spelling: "-h" and "--help" are two options of the tree
  name: string;
  description: string;
  // what its value completes to; undefined for a flag, which takes none
  value: Completes | undefined;
}

// One command of the tree: its subcommands, the options it takes (its own, its parents', its default subcommand's)
// and what each positional argument completes to (the last again and again when it is variadic).
export interface CompletionNode {
  path: string[];
  commands: { name: string; description: string }[];
  options: CompletionOption[];
  arguments: Completes[];
  variadic: boolean;
}

// The names values have in the command tree (<entry>, [session], <paths...>) and what each completes to; a value
// with choices completes to them, one named otherwise to nothing. A new option or argument so named needs nothing
// more.
const BY_VALUE_NAME: Readonly<Record<string, Completes>> = {
  entry: { kind: "listed", values: "entries" },
  session: { kind: "listed", values: "sessions" },
  pack: { kind: "listed", values: "packs" },
  // a pack to add: a folder or tarball among the files (an npm name is typed)
  package: { kind: "files" },
  file: { kind: "files" },
  // a setting of config.json (config get, set, unset): the schema's keys, read at a completion script's making;
  // "$schema" would need quoting at the prompt, so it is left to be typed
  get key(): Completes {
    return { kind: "words", words: schemaKeys("config").filter((key) => /^[a-z_]+$/.test(key)) };
  },
  paths: { kind: "files" },
};

// Every command of the program, root first, as help shows them (hidden commands and options left out): what the
// completion scripts are generated from, so they follow the commands without code of their own.
export function completionTree(program: Command): CompletionNode[] {
  const nodes: CompletionNode[] = [];
  const visit = (command: Command, path: string[], inherited: CompletionOption[]): void => {
    const help = command.createHelp();
    const own = help.visibleOptions(command).flatMap(toOptions);
    const fallback = defaultCommand(command);
    const options = merge(own, inherited, fallback ? help.visibleOptions(fallback).flatMap(toOptions) : []);
    const args = command.registeredArguments;
    nodes.push({
      path,
      commands: help.visibleCommands(command).map((sub) => ({ name: sub.name(), description: sub.description() })),
      options,
      arguments: args.map((argument) => completes(argument.name(), argument.argChoices)),
      variadic: args.at(-1)?.variadic === true,
    });
    // commander takes a command's options anywhere after it, also after a subcommand; help and version are each
    // command's own business
    const passed = merge(inherited, own.filter((option) => option.name !== "--help" && option.name !== "-h" && option.name !== "--version" && option.name !== "-V"));
    for (const sub of help.visibleCommands(command)) visit(sub, [...path, sub.name()], passed);
  };
  visit(program, [], []);
  return nodes;
}

// --- internal ---

function toOptions(option: Option): CompletionOption[] {
  const value = option.required || option.optional ? completes(valueName(option.flags), option.argChoices) : undefined;
  return [option.short, option.long]
    .filter((name): name is string => name !== undefined)
    .map((name) => ({ name, description: option.description, value }));
}

function completes(name: string, choices: readonly string[] | undefined): Completes {
  if (choices?.length) return { kind: "words", words: choices };
  return BY_VALUE_NAME[name] ?? { kind: "nothing" };
}

// "--provider <entry>" → "entry"
function valueName(flags: string): string {
  return /[<[]([^>\]]+?)(?:\.\.\.)?[>\]]/.exec(flags)?.[1] ?? "";
}

// The subcommand a group runs when none is named (sessions → list): its options are the group's too.
function defaultCommand(command: Command): Command | undefined {
  // commander keeps the name to itself
  const name = (command as unknown as { _defaultCommandName: string | null })._defaultCommandName;
  return name ? command.commands.find((sub) => sub.name() === name) : undefined;
}

// The options of several lists, each name once, the first list's first.
function merge(...lists: CompletionOption[][]): CompletionOption[] {
  const seen = new Set<string>();
  return lists.flat().filter((option) => !seen.has(option.name) && seen.add(option.name));
}
