import { Argument, type Command } from "commander";

// What each command's --help shows after its options: a few real command lines, each with what it does. Keyed by
// the command's path below uuldana ("" is uuldana itself).
const EXAMPLES: Readonly<Record<string, readonly [string, string][]>> = {
  "": [
    ["uuldana demo", "watch a failover between two stand-in agents"],
    ["uuldana providers list", "the agents uuldana found, in the order it tries them"],
    ["uuldana preflight", "check that each could take over now"],
    ["uuldana run", "start the first available agent here"],
    ["uuldana help run", "help for one command"],
  ],
  run: [
    ["uuldana run", "the first available entry, at the config's ceiling"],
    ["uuldana run --provider codex", "try codex first"],
    ["uuldana run --ceiling read-only", "no agent may change anything without asking"],
    ["uuldana run --ceiling auto-edit", "this session only: agents may edit files without asking"],
    ["uuldana run --no-failover -- --model sonnet", "stay on the first agent; --model sonnet goes to it"],
  ],
  explain: [
    [`uuldana explain "You've hit your usage limit · resets 5pm"`, "the verdict on one text"],
    ["uuldana explain --json < screen.txt", "the verdict on a file, as JSON"],
    ["uuldana explain --jsonl < lines.jsonl", "one verdict per JSON string line"],
  ],
  resume: [
    ["uuldana resume", "the newest session begun in this folder"],
    ["uuldana resume 0zymeun515", "a session by its id (uuldana sessions lists them)"],
  ],
  report: [
    ["uuldana report", "the newest session begun in this folder"],
    ["uuldana report 0zymeun515 --last 40", "with the last 40 lines each run drew"],
  ],
  demo: [
    ["uuldana demo", "about 10 seconds; nothing of yours is touched"],
    ["uuldana demo --keep", "keep its config, data and journal to look at"],
  ],
  sessions: [
    ["uuldana sessions", "every session, newest first"],
    ["uuldana sessions show 0zymeun515", "one session's history"],
  ],
  "sessions list": [["uuldana sessions list --json", "every session, as JSON"]],
  "sessions show": [["uuldana sessions show 0zymeun515 --json", "its journal's events, as JSON"]],
  "sessions stop": [["uuldana sessions stop 0zymeun515", "end the agent an orphaned session left running"]],
  cooldowns: [
    ["uuldana cooldowns", "the resting entries and until when"],
    ["uuldana cooldowns clear codex", "let codex run again now"],
  ],
  "cooldowns list": [["uuldana cooldowns list --json", "the resting entries, as JSON"]],
  "cooldowns clear": [
    ["uuldana cooldowns clear codex", "end one entry's rest"],
    ["uuldana cooldowns clear", "end every entry's rest"],
  ],
  providers: [
    ["uuldana providers list --all", "also the known agents that are not installed"],
    ["uuldana providers add ./uuldana-provider-example-1.0.0.tgz", "install a provider pack"],
  ],
  "providers list": [
    ["uuldana providers list", "the priority list and whether each entry can run"],
    ["uuldana providers list --ceiling full-access --json", "assessed under another ceiling, as JSON"],
  ],
  "providers validate": [["uuldana providers validate ~/.config/uuldana/providers", "check your drop-in manifests"]],
  "providers add": [
    ["uuldana providers add uuldana-provider-<name>", "a pack from npm"],
    ["uuldana providers add ./uuldana-provider-example-1.0.0.tgz", "a pack from its tarball"],
  ],
  "providers remove": [
    ["uuldana providers remove uuldana-provider-example", "uninstall it; entries that name its providers are listed"],
    ["uuldana providers remove --prune uuldana-provider-example", "and take those entries out of providers"],
  ],
  preflight: [
    ["uuldana preflight", "every entry, check by check"],
    ["uuldana preflight codex", "one entry"],
  ],
  config: [
    ["uuldana config get ceiling", "the ceiling your config.json sets, or uuldana's default"],
    ["uuldana config set ceiling auto-edit", "change one setting; the file is checked before it is written"],
  ],
  "config path": [["uuldana --config ./work.json config path", "the file a --config option names, made absolute"]],
  "config get": [
    ["uuldana config get providers", "one setting, as JSON"],
    ["uuldana config get", "the whole file"],
  ],
  "config set": [
    ["uuldana config set quiet_seconds 3", "a number (read as JSON)"],
    ["uuldana config set command_key ctrl-g", "a text (not JSON, so taken as it is)"],
    [`uuldana config set providers '["codex", "claude-code"]'`, "a list, quoted for the shell"],
  ],
  "config unset": [["uuldana config unset ceiling", "back to uuldana's default"]],
  "config edit": [
    ["uuldana config edit", "in $VISUAL, else $EDITOR, else vi; saved only once it is valid"],
    ['VISUAL="code --wait" uuldana config edit', "an editor with its arguments (no shell runs it)"],
  ],
  completion: [
    ['eval "$(uuldana completion bash)"', "complete uuldana in this bash (put the line in ~/.bashrc for every one)"],
    ["uuldana completion fish > ~/.config/fish/completions/uuldana.fish", "in every fish"],
  ],
  help: [
    ["uuldana help run", "the same as uuldana run --help"],
    ["uuldana help providers add", "help for a command of a group"],
  ],
};

// Adds the help command (uuldana help [command] [subcommand]: the help of uuldana or of that command, as --help
// shows it) and an "Examples:" block to each command's help.
export function addHelp(program: Command, done: () => void): void {
  const names = [...program.commands.map((command) => command.name()), "help"];
  program
    .command("help")
    .description("show help for uuldana or one of its commands (the same as --help)")
    .addArgument(new Argument("[command]", "the command").choices(names))
    .argument("[subcommand]", "a command of that command's group (providers add)")
    .exitOverride()
    .action((name: string | undefined, subName: string | undefined, _options: unknown, help: Command) => {
      let target = name === undefined ? program : program.commands.find((command) => command.name() === name)!;
      if (subName !== undefined) {
        const sub = target.commands.find((command) => command.name() === subName);
        const known = target.commands.map((command) => command.name());
        if (!sub) help.error(known.length ? `"${name}" has no command "${subName}"; its commands: ${known.join(", ")}` : `"${name}" has no commands`, { code: "commander.unknownCommand", exitCode: 2 });
        target = sub!;
      }
      target.outputHelp();
      done();
    });
  addExamples(program, "");
}

// --- internal ---

function addExamples(command: Command, path: string): void {
  const examples = EXAMPLES[path];
  if (examples?.length) {
    const width = Math.max(...examples.map(([line]) => line.length));
    command.addHelpText("after", ["", "Examples:", ...examples.map(([line, what]) => `  ${line.padEnd(width)}  # ${what}`)].join("\n"));
  }
  for (const sub of command.commands) addExamples(sub, path ? `${path} ${sub.name()}` : sub.name());
}
