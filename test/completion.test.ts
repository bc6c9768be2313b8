import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

import { bin, fixtures, linkAgent, makeSandbox, root, waitFor, type Sandbox } from "./helpers.js";
import { TestTerminal } from "./terminal.js";

const forbidNative = join(fixtures, "forbid-native.mjs");
const usage = 'hint: run "uuldana --help" for usage\n';

// Two sessions (the newer id sorts last) and a folder that is no session.
const OLDER = "0a1b2c3d4e";
const NEWER = "0z9y8x7w6v";
const ENTRIES = ["claude-code", "claude-work", "codex", "gemini"];
const LEVELS_SORTED = ["ask", "auto-edit", "full-access", "read-only"];
const COMMANDS = ["completion", "config", "cooldowns", "demo", "explain", "help", "preflight", "providers", "report", "resume", "run", "sessions"];

let sandbox: Sandbox;
let probes: string;

beforeAll(() => {
  sandbox = makeSandbox();
  // uuldana on the shells' PATH is the compiled bin, with node-pty and @xterm/headless forbidden: a Tab press that
  // loaded them would fail, and its values would be missing
  sandbox.write("bin/uuldana", `#!/bin/sh\nexec "${process.execPath}" --import "${forbidNative}" "${bin}" "$@"\n`, 0o755);
  sandbox.write("config/config.json", {
    providers: ["claude-code", { id: "claude-code", name: "claude-work" }, "codex", { id: "$(touch pwned)" }, { id: "two words" }],
    packs: ["uuldana-provider-acme", "@tools/uuldana-provider-beta", "../local-pack", "~/home-pack", "$(touch pwned)"],
  });
  // an installed provider the config does not list: providers list shows it, so a Tab offers it; its version is
  // never asked
  linkAgent(sandbox, "gemini", "version-agent.sh");
  probes = join(sandbox.dir, "probes.log");
  for (const id of [OLDER, NEWER]) {
    sandbox.write(`data/sessions/${id}/journal.jsonl`, JSON.stringify({ type: "session-start", at: "2026-01-01T00:00:00.000Z", cwd: sandbox.project }) + "\n");
  }
  mkdirSync(join(sandbox.data, "sessions", "Not-A-Session"));
  writeFileSync(join(sandbox.project, "notes.txt"), "");
});
afterAll(() => sandbox.cleanup());

const env = (): Record<string, string> => ({ ...sandbox.env, FAKE_PROBE_LOG: probes, SHELL: "/bin/sh", TERM: "xterm-256color" });

// A line being completed and what a Tab at its end offers.
interface Case {
  line: string;
  offers: string[];
}

const cases: Case[] = [
  { line: "uuldana ", offers: COMMANDS },
  { line: "uuldana sessions ", offers: ["list", "show", "stop"] },
  { line: "uuldana run --provider ", offers: ENTRIES },
  { line: "uuldana resume ", offers: [OLDER, NEWER] },
  { line: "uuldana report ", offers: [OLDER, NEWER] },
  { line: "uuldana report --l", offers: ["--last"] },
  { line: "uuldana run --ceiling ", offers: LEVELS_SORTED },
  { line: "uuldana run --no-", offers: ["--no-failover"] },
  { line: "uuldana sessions show ", offers: [OLDER, NEWER] },
  { line: "uuldana --config x sessions stop 0z", offers: [NEWER] },
  { line: "uuldana cooldowns clear cl", offers: ["claude-code", "claude-work"] },
  { line: "uuldana preflight cl", offers: ["claude-code", "claude-work"] },
  { line: "uuldana preflight --", offers: ["--config", "--help", "--json"] },
  { line: "uuldana providers list --", offers: ["--all", "--ceiling", "--config", "--help", "--json"] },
  { line: "uuldana completion ", offers: ["bash", "fish", "zsh"] },
  { line: "uuldana help pr", offers: ["preflight", "providers"] },
  { line: "uuldana providers remove --p", offers: ["--prune"] },
  // the packs config.json names, but for one the shell would expand and one it would run
  { line: "uuldana providers remove ", offers: ["../local-pack", "@tools/uuldana-provider-beta", "uuldana-provider-acme"] },
  { line: "uuldana providers add no", offers: ["notes.txt"] },
  { line: "uuldana config ", offers: ["edit", "get", "path", "set", "unset"] },
  // the settings config.json may hold, from its schema
  { line: "uuldana config get ce", offers: ["ceiling"] },
  { line: "uuldana config set wai", offers: ["wait", "wait_max_hours"] },
  { line: "uuldana config unset re", offers: ["receiver_seconds", "redact", "replaces", "return_home"] },
  // after "--" the words are the agent's: nothing of uuldana's, only file names
  { line: "uuldana run -- --", offers: [] },
  { line: "uuldana run -- no", offers: ["notes.txt"] },
];

// Whether a shell can be started here. The tests of a shell that is not installed are replaced by one that says so,
// and passes only while the shell truly cannot be started.
function installed(shell: string): boolean {
  return spawnSync(shell, ["-c", "exit 0"]).error === undefined;
}
const bashCompletion = "/usr/share/bash-completion/bash_completion";
const has = { bash: installed("bash"), bashCompletion: installed("bash") && existsSync(bashCompletion), zsh: installed("zsh"), fish: installed("fish") };

function absent(shell: "bash" | "zsh" | "fish"): void {
  it(`${shell} is not installed on this machine (checked: it cannot be started), so its script is not sourced`, () => {
    expect(installed(shell)).toBe(false);
  });
}

// The script uuldana prints for a shell, asked once.
const scripts = new Map<string, string>();
function script(shell: string): string {
  if (!scripts.has(shell)) {
    const run = spawnSync(join(sandbox.path, "uuldana"), ["completion", shell], { env: env(), encoding: "utf8" });
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    scripts.set(shell, run.stdout);
  }
  return scripts.get(shell)!;
}

function sorted(words: string[]): string[] {
  return [...words].sort();
}

// The words readline hands a bash completion function: split at blanks, and at "=" (which COMP_WORDBREAKS holds).
function bashWords(line: string): string[] {
  return line.split(" ").flatMap((word) => {
    const at = word.indexOf("=");
    if (at === -1) return [word];
    return word.slice(at + 1) ? [word.slice(0, at), "=", word.slice(at + 1)] : [word.slice(0, at), "="];
  });
}

// Calls bash's completion function for uuldana as readline would at the end of the line; prints COMPREPLY.
function bashComplete(setup: string, line: string): { registered: string; offers: string[] } {
  const words = bashWords(line);
  const program = [
    setup,
    "complete -p uuldana",
    `COMP_WORDS=(${words.map((word) => `'${word}'`).join(" ")})`,
    `COMP_CWORD=${words.length - 1}`,
    `COMP_LINE='${line}'`,
    `COMP_POINT=${line.length}`,
    "_uuldana",
    `printf '%s\\n' "\${COMPREPLY[@]}"`,
  ].join("\n");
  const run = spawnSync("bash", ["--norc", "--noprofile", "-c", program], { cwd: sandbox.project, env: env(), encoding: "utf8" });
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
  const [registered = "", ...offers] = run.stdout.split("\n").slice(0, -1);
  // printf prints one empty line for an empty COMPREPLY
  return { registered, offers: offers.length === 1 && offers[0] === "" ? [] : offers };
}

// What fish's own completion offers for the line (fish sorts them), without their descriptions.
function fishComplete(line: string, setup = ""): string[] {
  const run = spawnSync("fish", ["-c", `${setup}complete -C $UULDANA_TEST_LINE`], { cwd: sandbox.project, env: { ...env(), UULDANA_TEST_LINE: line }, encoding: "utf8" });
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
  return run.stdout.split("\n").filter(Boolean).map((offer) => offer.split("\t")[0]!);
}

let terminal: TestTerminal | undefined;
afterEach(() => {
  terminal?.child.kill("SIGKILL");
  terminal = undefined;
});

// Types the line into an interactive zsh in a real terminal, its completion system loaded as set up, then a key whose
// widget completes the word and writes a mark when done. Each match zsh would add is recorded: compadd -O adds
// nothing and tells what it would have added.
async function zshComplete(setup: string, line: string): Promise<string[]> {
  const out = join(sandbox.dir, `zsh-offers-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  const rc = [
    "bindkey -e",
    setup,
    "compadd() {",
    '  if (( ${@[(I)-[OAD]*]} )); then builtin compadd "$@"; return; fi',
    "  local -a __found",
    '  builtin compadd -O __found "$@"',
    `  (( $#__found )) && print -rl -- $__found >> '${out}'`,
    '  builtin compadd "$@"',
    "}",
    `__test_complete() { zle complete-word; print -r -- done >| '${out}.done' }`,
    "zle -N __test_complete",
    "bindkey '^T' __test_complete",
    "PS1='zsh-test> '",
  ].join("\n");
  writeFileSync(`${out}.zsh`, rc + "\n");
  terminal = new TestTerminal("zsh", ["-f", "-i"], { cwd: sandbox.project, env: env(), cols: 200, rows: 50 });
  terminal.child.write(`source '${out}.zsh'\r`);
  await terminal.waitFor("zsh-test>");
  terminal.child.write(`${line}\x14`);
  await waitFor(() => existsSync(`${out}.done`), `zsh to complete "${line}"`, 15_000);
  return existsSync(out) ? readFileSync(out, "utf8").split("\n").filter(Boolean) : [];
}

describe("uuldana completion", () => {
  it("prints a script for each shell on stdout, exit 0", async () => {
    const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
    const header = (shell: string): string => `# uuldana ${version}: completion for ${shell}, generated from its commands; generate it again after an update\n`;
    const bash = await sandbox.run(["completion", "bash"]);
    expect(bash).toMatchObject({ code: 0, stderr: "" });
    expect(bash.stdout.startsWith(header("bash"))).toBe(true);
    expect(bash.stdout.endsWith("\ncomplete -F _uuldana uuldana\n")).toBe(true);
    const zsh = await sandbox.run(["completion", "zsh"]);
    expect(zsh).toMatchObject({ code: 0, stderr: "" });
    expect(zsh.stdout.startsWith(`#compdef uuldana\n${header("zsh")}`)).toBe(true);
    const fish = await sandbox.run(["completion", "fish"]);
    expect(fish).toMatchObject({ code: 0, stderr: "" });
    expect(fish.stdout.startsWith(header("fish"))).toBe(true);
    expect(fish.stdout.endsWith("\ncomplete -c uuldana -f -a '(__uuldana_complete)'\n")).toBe(true);
  });

  it.each([
    [["completion"], "uuldana: completion needs the name of your shell: bash, zsh or fish [E_USAGE]\nhint: for example \"uuldana completion bash\"; the README's \"Shell completion\" says where the script goes\n"],
    [["completion", "tcsh"], `uuldana: command-argument value 'tcsh' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish. [E_USAGE]\n${usage}`],
  ])("exits 2 for %j, naming the shells", async (args, stderr) => {
    expect(await sandbox.run(args)).toEqual({ code: 2, stdout: "", stderr });
  });

  it("lists the entries providers list would walk and the sessions, newest first, without asking any agent its version", async () => {
    expect(await sandbox.run(["completion", "--values", "entries"], { env: { FAKE_PROBE_LOG: probes } })).toEqual({ code: 0, stdout: ENTRIES.join("\n") + "\n", stderr: "" });
    expect(existsSync(probes)).toBe(false);
    expect(await sandbox.run(["completion", "--values", "sessions"])).toEqual({ code: 0, stdout: `${NEWER}\n${OLDER}\n`, stderr: "" });
    // the same entries as providers list, which does ask, less the two no shell may be handed as they are
    const listed = await sandbox.run(["providers", "list", "--json"], { env: { FAKE_PROBE_LOG: probes } });
    expect((JSON.parse(listed.stdout) as { entry: string }[]).map((row) => row.entry)).toEqual([...ENTRIES.slice(0, 3), "$(touch pwned)", "two words", "gemini"]);
    expect(readFileSync(probes, "utf8")).toBe("gemini\n");
  });

  it("prints nothing, and no error, when the config is broken or the sessions folder is a file", async () => {
    const broken = makeSandbox();
    try {
      broken.write("config/config.json", '{"providers": [');
      broken.write("data/sessions", "not a folder");
      for (const kind of ["entries", "sessions", "packs"]) expect(await broken.run(["completion", "--values", kind])).toEqual({ code: 0, stdout: "", stderr: "" });
    } finally {
      broken.cleanup();
    }
  });

  it("lists in --help the commands a Tab is checked to offer below: the scripts take them from the same tree", async () => {
    const help = (await sandbox.run(["--help"])).stdout;
    const listed = [...help.split("Commands:\n")[1]!.split("\n\n")[0]!.matchAll(/^ {2}(\S+)/gm)].map((match) => match[1]!);
    expect(sorted(listed)).toEqual(COMMANDS);
  });
});

if (has.bash) {
  describe("in bash", () => {
    const setup = (): string => `source '${sandbox.write("uuldana.bash", script("bash"))}'`;

    it.each(cases)("completes $line", ({ line, offers }) => {
      const found = bashComplete(setup(), line);
      expect(found.registered).toBe("complete -F _uuldana uuldana");
      expect(sorted(found.offers)).toEqual(sorted(offers));
    });

    it("completes a value after --provider=, as bash splits the word at =", () => {
      expect(bashComplete(setup(), "uuldana run --provider=c").offers).toEqual(["claude-code", "claude-work", "codex"]);
    });

    it("completes with the script eval'd, as a line in ~/.bashrc does", () => {
      expect(bashComplete('eval "$(uuldana completion bash)"', "uuldana sessions ")).toEqual({ registered: "complete -F _uuldana uuldana", offers: ["list", "show", "stop"] });
    });
  });
} else absent("bash");

if (has.bashCompletion) {
  describe("in bash with bash-completion", () => {
    it("loads the script from the user's completions folder at the first Tab", () => {
      sandbox.write(".local/share/bash-completion/completions/uuldana", script("bash"));
      const found = bashComplete(`source ${bashCompletion}\n_completion_loader uuldana`, "uuldana sessions ");
      expect(found).toEqual({ registered: "complete -F _uuldana uuldana", offers: ["list", "show", "stop"] });
    });
  });
} else {
  it(`bash-completion is not installed on this machine (checked: no ${bashCompletion}), so its folder is not tried`, () => {
    expect(installed("bash") && existsSync(bashCompletion)).toBe(false);
  });
}

if (has.zsh) {
  describe("in zsh", () => {
    const fpath = (): string => {
      const folder = join(sandbox.dir, "zsh-functions");
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, "_uuldana"), script("zsh"));
      return `fpath=('${folder}' $fpath)\nautoload -Uz compinit && compinit -u -D`;
    };

    it.each(cases)("completes $line", async ({ line, offers }) => {
      expect(sorted(await zshComplete(fpath(), line))).toEqual(sorted(offers));
    });

    it("completes a value after --provider=", async () => {
      expect(sorted(await zshComplete(fpath(), "uuldana run --provider=c"))).toEqual(["claude-code", "claude-work", "codex"]);
    });

    it("completes with the script eval'd after compinit", async () => {
      expect(sorted(await zshComplete('autoload -Uz compinit && compinit -u -D\neval "$(uuldana completion zsh)"', "uuldana sessions "))).toEqual(["list", "show", "stop"]);
    });
  });
} else absent("zsh");

if (has.fish) {
  describe("in fish", () => {
    const place = (): void => void sandbox.write(".config/fish/completions/uuldana.fish", script("fish"));

    // fish offers a word that begins with ./ or ../ only when that path exists from the folder it runs in (a pack's
    // path in packs is relative to the config dir): such a pack is left out there, as fish itself decides
    it.each(cases)("completes $line", ({ line, offers }) => {
      place();
      expect(fishComplete(line)).toEqual(sorted(offers.filter((offer) => !/^\.\.?\//.test(offer))));
    });

    it("completes a value after --provider=", () => {
      place();
      expect(fishComplete("uuldana run --provider=c")).toEqual(["--provider=claude-code", "--provider=claude-work", "--provider=codex"]);
    });
  });
} else absent("fish");

it("never asked an agent its version at a Tab press", () => {
  // the one probe is providers list's, above
  expect(readFileSync(probes, "utf8")).toBe("gemini\n");
});
