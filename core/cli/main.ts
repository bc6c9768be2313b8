#!/usr/bin/env node
import { Argument, Command, CommanderError, Option } from "commander";

import { loadContext, loadContextDespiteConfig, type Context } from "../config/context.js";
import { UuldanaError, errorJson, exitCodeOf, formatError, formatInternalError } from "../base/errors.js";
import { LEVELS, type Level } from "../config/levels.js";
import { resolveDirs } from "../base/paths.js";
import { listProviders, validateManifests } from "./providers-command.js";
import { addConfigCommands } from "./config-group.js";
import { addHelp } from "./help-text.js";
import type { CommandResult } from "./result.js";
import { LISTED_VALUES, SHELLS, completionTree, type ListedValues, type Shell } from "./completion-tree.js";
import { safeOutput } from "../base/safe-text.js";
import { STOP_SIGNALS } from "../base/process.js";
import { writePendingCooldowns } from "../session/cooldowns.js";
import { releaseLostTerminal, restoreTerminal } from "../terminal/tty.js";
import { VERSION } from "../base/version.js";

// How a --json command prints on stdout the error it failed with: as its own output is, pretty (--json) or on one
// line (explain --jsonl).
type JsonOutput = "pretty" | "line";

// Prints each command's result and sets the exit code; it never calls process.exit, so output to a pipe always
// drains. Only the commands that host agents (run, resume, demo) also write while they run. Everything printed here
// passes through safeOutput: whatever a file, an agent or another program put into a message, no control sequence
// reaches the terminal — so a new command, or a new message quoting a value, needs nothing of its own.
async function main(argv: readonly string[]): Promise<number> {
  let outcome: CommandResult | undefined;
  let json: JsonOutput | undefined;
  const program = buildProgram(
    (value) => {
      outcome = value;
    },
    (value) => {
      json = value;
    },
  );
  let exitCode: number;
  try {
    await program.parseAsync(argv, { from: "user" });
    if (outcome?.stdout) process.stdout.write(safeOutput(outcome.stdout));
    if (outcome?.stderr) process.stderr.write(safeOutput(outcome.stderr));
    exitCode = outcome?.exitCode ?? 0;
  } catch (error) {
    exitCode = report(error, json);
  }
  // cooldowns a command could not write yet (another uuldana held the table): a last try before the process ends
  for (const notice of await writePendingCooldowns()) process.stderr.write(safeOutput(`uuldana: ${notice}\n`));
  return exitCode;
}

// --- internal ---

function buildProgram(done: (result: CommandResult) => void, jsonOutput: (json: JsonOutput | undefined) => void): Command {
  const program = new Command("uuldana")
    .description("Run AI coding agents in your terminal; when one's usage allowance is gone, continue with the next.")
    .version(VERSION, "-V, --version", "print the version")
    .helpOption("-h, --help", "show help")
    .addHelpCommand(false)
    // each command's help shows uuldana's own options (--config) too
    .configureHelp({ showGlobalOptions: true })
    .option("--config <file>", "use this file instead of your config.json")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => process.stdout.write(safeOutput(text)),
      writeErr: (text) => process.stderr.write(safeOutput(text)),
      outputError: (text, write) => write(formatError(usageError(text))),
    });

  const wiring: Wiring = {
    done,
    // the folders and merged config, for commands that need them (--config replaces config.json)
    context: () => loadContext({ configFile: program.opts<{ config?: string }>().config }),
    // for commands that only read uuldana's own records: a broken config is said once, and they go on without it
    recordsContext: async () => {
      const { context, notice } = await loadContextDespiteConfig({ configFile: program.opts<{ config?: string }>().config });
      if (notice) process.stderr.write(safeOutput(`uuldana: ${notice}\n`));
      return context;
    },
    // a command started with --json (or --jsonl): its failure is also printed on stdout, as JSON
    wantsJson: (options) => jsonOutput(options.jsonl ? "line" : options.json ? "pretty" : undefined),
  };
  // a Tab press says nothing of a broken config: completion goes on with what it can read
  const quietContext = async (): Promise<Context> => (await loadContextDespiteConfig({ configFile: program.opts<{ config?: string }>().config })).context;
  addRunCommands(program, wiring);
  const groups = addHistoryCommands(program, wiring);
  groups.push(addProviderCommands(program, wiring));
  addConfigCommands(program, wiring);

  program
    .command("completion")
    .description("print a script that completes uuldana's commands, options, entries and sessions in bash, zsh or fish")
    .addArgument(new Argument("[shell]", "the shell the script is for").choices(SHELLS))
    // what the scripts ask for at a Tab press; not a command for people
    .addOption(new Option("--values <kind>", "print the entry keys, session ids or packs, one a line").choices(LISTED_VALUES).hideHelp())
    .exitOverride()
    .action(async (shell: Shell | undefined, options: { values?: ListedValues }) => {
      const { listValues, printCompletion } = await import("./completion-command.js");
      done(options.values ? await listValues(options.values, quietContext) : printCompletion(shell, completionTree(program), VERSION));
    });

  addHelp(program, () => done({ stdout: "", stderr: "", exitCode: 0 }));
  // last in uuldana's own help, after its examples
  program.addHelpText("after", () => {
    const dirs = resolveDirs();
    return `\nFiles:\n  config  ${dirs.config}/config.json, ${dirs.config}/providers/*.json\n  packs   ${dirs.config}/node_modules\n  data    ${dirs.data}\n  cache   ${dirs.cache}`;
  });
  for (const group of groups) refuseUnknownWords(group);
  return program;
}

// What every command's action is wired to: where its result goes, the context it loads, and whether it wants JSON.
interface Wiring {
  done: (result: CommandResult) => void;
  context: () => ReturnType<typeof loadContext>;
  recordsContext: () => Promise<Context>;
  wantsJson: (options: { json?: boolean; jsonl?: boolean }) => void;
}

// The commands that run agents or read what they said: run, explain, resume, report, demo.
function addRunCommands(program: Command, { done, context: commandContext, recordsContext, wantsJson }: Wiring): void {
  program
    .command("run")
    .description("run the first available entry of the priority list in this terminal, passed through untouched")
    .option("--provider <entry>", "try this entry first")
    .addOption(new Option("--ceiling <level>", "the most the agents may do without asking, for this session: above or below your config's ceiling (a project's config can still lower it)").choices(LEVELS))
    .option("--no-failover", "stay on the first agent when its allowance is gone")
    .option("--wait", "when every entry is resting, wait for the first to return instead of exiting")
    .argument("[agent-args...]", "arguments after -- go to the first agent")
    .exitOverride()
    .action(async (agentArgs: string[], options: { provider?: string; ceiling?: Level; failover: boolean; wait?: boolean }) => {
      const context = await commandContext();
      const { runCommand } = await import("./run-command.js");
      done(await hostingAgents((stop) => runCommand(context, { ...options, agentArgs, stop })));
    });

  program
    .command("explain")
    .description("say whether a text means a usage allowance is gone, why, and when it returns")
    .argument("[text...]", "the text (several words are one text); none: read standard input")
    .option("--json", "print the verdict as one JSON document")
    .option("--jsonl", "read one JSON string per input line, print one verdict per line")
    .option("--now <iso>", "read times as if it were this instant (the TZ variable sets the zone)")
    .option("--provider <id>", "also use this provider's limit_phrases and model names")
    .exitOverride()
    .action(async (words: string[], options: { json?: boolean; jsonl?: boolean; now?: string; provider?: string }) => {
      wantsJson(options);
      const { explainCommand } = await import("./explain-command.js");
      const context = options.provider ? await recordsContext() : undefined;
      done(await explainCommand(context, words, options));
    });

  program
    .command("resume")
    .description("continue a session (the newest begun in this folder, by default) with its whole history")
    .argument("[session]", "the session's id")
    .option("--wait", "when every entry is resting, wait for the first to return instead of exiting")
    .exitOverride()
    .action(async (id: string | undefined, options: { wait?: boolean }) => {
      const context = await commandContext();
      const { resumeCommand } = await import("./resume-command.js");
      done(await hostingAgents((stop) => resumeCommand(context, id, stop, options.wait)));
    });

  program
    .command("report")
    .description("write what the reader saw in a session to report.md in its folder, for a bug report: each candidate, its verdict and the lines drawn around it")
    .argument("[session]", "the session's id (the newest begun in this folder, by default)")
    .option("--last <n>", "add the last N lines each run drew")
    .exitOverride()
    .action(async (id: string | undefined, options: { last?: string }) => {
      const context = await recordsContext();
      const { reportCommand } = await import("./report-command.js");
      done(reportCommand(context, id, options));
    });

  program
    .command("demo")
    .description("watch a failover between two stand-in agents, in temporary folders (about 10 seconds)")
    .option("--keep", "keep the demo's config, data and journal instead of removing them")
    .exitOverride()
    .action(async (options: { keep?: boolean }) => {
      const { demoCommand } = await import("./demo-command.js");
      done(await hostingAgents((stop) => demoCommand({ ...options, stop })));
    });
}

// The sessions and cooldowns groups; the groups, for their unknown words.
function addHistoryCommands(program: Command, { done, recordsContext, wantsJson }: Wiring): Command[] {
  const sessions = program.command("sessions").description("uuldana sessions and their history across providers").addHelpCommand(false).exitOverride();
  sessions
    .command("list", { isDefault: true })
    .description("every session, newest first: runs and state")
    .option("--json", "print one JSON array")
    .exitOverride()
    .action(async (options: { json?: boolean }) => {
      wantsJson(options);
      const context = await recordsContext();
      const { listSessions } = await import("./sessions-command.js");
      done(listSessions(context, options));
    });
  sessions
    .command("show")
    .description("one session's history across providers")
    .argument("<session>", "the session's id")
    .option("--json", "print the journal's events as one JSON array")
    .exitOverride()
    .action(async (id: string, options: { json?: boolean }) => {
      wantsJson(options);
      const context = await recordsContext();
      const { showSession } = await import("./sessions-command.js");
      done(showSession(context, id, options));
    });
  sessions
    .command("stop")
    .description("end the agent a session left running when its uuldana was gone (HUP, TERM, then KILL)")
    .argument("<session>", "the session's id")
    .exitOverride()
    .action(async (id: string) => {
      const context = await recordsContext();
      const { stopSession } = await import("./sessions-command.js");
      done(stopSession(context, id));
    });

  const cooldowns = program.command("cooldowns").description("the entries resting after a usage limit").addHelpCommand(false).exitOverride();
  cooldowns
    .command("list", { isDefault: true })
    .description("show the resting entries and until when")
    .option("--json", "print one JSON array")
    .exitOverride()
    .action(async (options: { json?: boolean }) => {
      wantsJson(options);
      const context = await recordsContext();
      const { listCooldowns } = await import("./cooldowns-command.js");
      done(await listCooldowns(context, options));
    });
  cooldowns
    .command("clear")
    .description("end an entry's rest (all entries when none is named)")
    .argument("[entry]", "the entry's key")
    .exitOverride()
    .action(async (entry: string | undefined) => {
      const context = await recordsContext();
      const { clearCooldowns } = await import("./cooldowns-command.js");
      done(await clearCooldowns(context, entry));
    });
  return [sessions, cooldowns];
}

// The providers group and preflight; the group, for its unknown words.
function addProviderCommands(program: Command, { done, context: commandContext, wantsJson }: Wiring): Command {
  const providers = program
    .command("providers")
    .description("the agents uuldana knows, their order and whether each can run")
    .addHelpCommand(false)
    .exitOverride();

  const ceilingOption = new Option("--ceiling <level>", "assess entries as under this ceiling, as run --ceiling would (a project's config can still lower it)").choices(LEVELS);
  providers
    .command("list", { isDefault: true })
    .description("show the priority list: order, source, version, level, prompt support, resting, status")
    .option("--all", "also show known providers that are not installed")
    .option("--json", "print one JSON array")
    .addOption(ceilingOption)
    .exitOverride()
    .action(async (options: { all?: boolean; json?: boolean; ceiling?: Level }) => {
      wantsJson(options);
      const context = await commandContext();
      done(await listProviders(context, options));
    });

  providers
    .command("validate")
    .description("check provider manifest files (or folders of them); exit 1 when any is invalid")
    .argument("<paths...>", "manifest files or folders")
    .exitOverride()
    .action(async (paths: string[]) => {
      done(await validateManifests(paths, process.cwd()));
    });

  providers
    .command("add")
    .description("install a provider pack (an npm package, a folder or a .tgz) into the config dir and add it to packs")
    .argument("<package>", "uuldana-provider-<name> (npm), @scope/uuldana-provider-<name>, a folder or a tarball")
    .option("--allow-scripts", "let npm run the pack's install scripts (off by default)")
    .option("--replace <id>", "use the pack's manifest of this built-in provider instead of the built-in one")
    .exitOverride()
    .action(async (spec: string, options: { allowScripts?: boolean; replace?: string }) => {
      const context = await commandContext();
      const { addPackCommand } = await import("./packs-command.js");
      done(await addPackCommand(context, spec, options));
    });

  providers
    .command("remove")
    .description("take a pack out of packs and uninstall it from the config dir")
    .argument("<pack>", "the pack as packs names it")
    .option("--prune", "also take out of providers the entries that name a provider only this pack brought")
    .exitOverride()
    .action(async (spec: string, options: { prune?: boolean }) => {
      const context = await commandContext();
      const { removePackCommand } = await import("./packs-command.js");
      done(await removePackCommand(context, spec, options));
    });

  program
    .command("preflight")
    .description("say whether an entry (every entry, when none is named) could take over now, check by check, without starting it")
    .argument("[entry]", "the entry's key")
    .option("--json", "print one JSON array")
    .exitOverride()
    .action(async (entry: string | undefined, options: { json?: boolean }) => {
      wantsJson(options);
      const context = await commandContext();
      const { preflightCommand } = await import("./preflight-command.js");
      const { withProgress } = await import("./progress.js");
      done(await withProgress("uuldana: checking each entry (its CLI's version and --help)…", () => preflightCommand(context, entry, options)));
    });
  return providers;
}

// "list" is each group's default command, so commander hands it any word that names no command, and says "too many
// arguments for 'list'"; such a word is an unknown command of the group, said as one, with the group's commands.
function refuseUnknownWords(group: Command): void {
  const list = group.commands.find((command) => command.name() === "list")!;
  list.allowExcessArguments(true).hook("preAction", (command) => {
    let words = command.args;
    // "list" itself, written after an option of the group's (uuldana providers --json list)
    if (group.args[0] !== list.name() && words[0] === list.name()) words = words.slice(1);
    const word = words[0];
    if (word === undefined) return;
    const names = group.commands.map((known) => known.name());
    let message: string;
    if (group.args[0] === list.name() || words !== command.args) message = `unexpected argument "${word}" for "${group.name()} list", which takes none`;
    else if (names.includes(word)) message = `"${word}" must come right after "${group.name()}", before any option`;
    else message = `unknown command "${word}" for "${group.name()}"; its commands: ${names.join(", ")}`;
    command.error(message, { code: "commander.unknownCommand", exitCode: 2 });
  });
}

// While a command hosts agents: a signal that asks uuldana to stop (TERM, HUP, INT) aborts `stop`, and the session
// leaves its agent the graceful way; a crash of uuldana gives the terminal back, stops the running agents within
// about two seconds, ends their sessions in the journal and exits 70.
async function hostingAgents(command: (stop: AbortSignal) => Promise<CommandResult>): Promise<CommandResult> {
  const { endSessionsOnCrash } = await import("../session/session.js");
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => stop.abort(signal);
  const onCrash = (error: Error): void => {
    restoreTerminal();
    process.stderr.write(safeOutput(formatInternalError(error)));
    endSessionsOnCrash(error);
    process.exit(70);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  process.on("uncaughtException", onCrash);
  try {
    return await command(stop.signal);
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
    process.off("uncaughtException", onCrash);
  }
}


// commander's own message ("error: unknown option '--jsn'\n(Did you mean --json?)\n") as a usage error; its
// suggestion becomes the hint
function usageError(text: string): UuldanaError {
  const [message = "", ...rest] = text.replace(/^error: /, "").trimEnd().split("\n");
  const suggestion = rest.map((line) => /^\(Did you mean (.+)\?\)$/.exec(line)?.[1]).find((found) => found !== undefined);
  const details = rest.filter((line) => !/^\(Did you mean .+\?\)$/.test(line));
  return new UuldanaError("E_USAGE", message, { details, hint: suggestion ? `did you mean ${suggestion}?` : 'run "uuldana --help" for usage' });
}

// A failure: printed on stderr, and for a --json command also on stdout as one JSON error object. commander printed
// its own errors already, through formatError.
function report(error: unknown, json: JsonOutput | undefined): number {
  if (error instanceof CommanderError) {
    if (error.code === "commander.helpDisplayed" || error.code === "commander.version") {
      return 0;
    }
    return 2;
  }
  if (json) process.stdout.write(safeOutput(JSON.stringify(errorJson(error), null, json === "pretty" ? 2 : undefined) + "\n"));
  process.stderr.write(safeOutput(formatError(error)));
  return exitCodeOf(error);
}

// A reader that leaves early (uuldana … | head) or a terminal that is gone is no error of the command: what is left
// to write is dropped, and the command ends as it would have. Output that could not be written for any other reason
// (a full disk) is lost output: the exit code says so.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE" && error.code !== "EIO" && !process.exitCode) process.exitCode = 1;
  });
}
// Process-level handlers and the exit code belong here: the layers below hand back results or throw UuldanaErrors,
// and their last chances before exit (the user's terminal, cooldowns not written yet) are called from this file.
process.on("exit", () => {
  restoreTerminal();
  releaseLostTerminal();
});

process.exitCode = await main(process.argv.slice(2));
