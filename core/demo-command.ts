import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { PassThrough, Writable } from "node:stream";

import { stripEscapes } from "./ansi.js";
import { loadContext } from "./context.js";
import { packageRoot } from "./paths.js";
import { checkNodePty } from "./pty.js";
import { result, type CommandResult } from "./result.js";
import { runCommand } from "./run-command.js";
import { listSessionIds, showSession } from "./sessions-command.js";

const AGENTS = ["demo-first", "demo-second"] as const;
const QUESTION = "What happens when an agent's usage allowance runs out?";
// what each demo agent prints when it waits for the user, and what the scripted user then types
const CUES: { cue: string; keys: string; delayMs: number }[] = [
  { cue: "Ask me anything.", keys: `${QUESTION}\r`, delayMs: 600 },
  { cue: "Picking up where the first agent stopped.", keys: "/exit\r", delayMs: 1500 },
];
// a demo that has not ended by then is told to quit, whatever it shows
const DEADLINE_MS = 40_000;

// uuldana demo: a real session through the run engine, in a real pseudo-terminal, with the two demo agents shipped in
// the package, and config, data and cache in a temporary folder. A scripted user asks the first agent a question;
// its weekly allowance runs out; uuldana moves the conversation to the second. Ends with the session's history.
export async function demoCommand(options: { keep?: boolean }): Promise<CommandResult> {
  checkNodePty();
  const folder = mkdtempSync(join(tmpdir(), "uuldana-demo-"));
  try {
    const env = prepare(folder);
    const context = await loadContext({ env, cwd: join(folder, "project") });
    const color = Boolean(process.stdout.isTTY);
    const show = (text: string): void => void process.stdout.write(color ? text : stripEscapes(text).replace(/\r\n/g, "\n"));
    show(`uuldana demo: two stand-in agents; config, data and cache in ${folder}\n`);
    const user = scriptedUser(show);
    const ended = await runCommand(context, {
      agentArgs: [],
      terminal: user.terminal,
      say: (line) => show(color ? `\r\n\x1b[36m${line}\x1b[0m\r\n` : `\n${line}\n`),
    }).finally(() => user.done());
    const session = listSessionIds(context.dirs.data)[0];
    const history = session ? showSession(context, session.id, {}).stdout : "";
    const failedOver = history.includes("demo-second");
    const text = [
      ended.stderr.trimEnd(),
      "",
      `$ uuldana sessions show ${session?.id ?? "?"}`,
      history.trimEnd(),
      "",
      options.keep ? `The demo's files are kept in ${folder}.` : "The demo's temporary folder has been removed (uuldana demo --keep keeps it).",
      failedOver ? "That was a failover: run uuldana run in a project to start your own agents." : "",
    ].filter((line, i, all) => line || all[i - 1]);
    if (!failedOver && ended.exitCode > 128) return result(text.join("\n") + "\n", "uuldana: the demo was stopped before the failover\n", ended.exitCode);
    if (!failedOver) return result(text.join("\n") + "\n", "uuldana: the demo did not reach the second agent\n", 1);
    return result(text.join("\n") + "\n", "", ended.exitCode);
  } finally {
    if (!options.keep) rmSync(folder, { recursive: true, force: true });
  }
}

// --- internal ---

// The demo's folders and programs: config with the two entries, their manifests as drop-ins, the agents on PATH.
function prepare(folder: string): NodeJS.ProcessEnv {
  const dirs = { config: join(folder, "config"), data: join(folder, "data"), cache: join(folder, "cache"), bin: join(folder, "bin"), project: join(folder, "project") };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  mkdirSync(join(dirs.config, "providers"), { mode: 0o700 });
  const shipped = join(packageRoot(), "examples", "demo");
  for (const id of AGENTS) {
    const manifest = readFileSync(join(shipped, "manifests", `${id}.json`), "utf8");
    writeFileSync(join(dirs.config, "providers", `${id}.json`), manifest, { mode: 0o600 });
    // the agent runs with this very Node, whatever PATH says
    const body = readFileSync(join(shipped, "agents", `${id.slice("demo-".length)}.mjs`), "utf8").replace(/^#!.*\n/, "");
    const shebang = /\s/.test(process.execPath) ? "#!/usr/bin/env node" : `#!${process.execPath}`;
    const program = join(dirs.bin, `uuldana-${id}`);
    writeFileSync(program, `${shebang}\n${body}`);
    chmodSync(program, 0o700);
  }
  const config = { providers: [...AGENTS], auto_detect: false, quiet_seconds: 1.5 };
  writeFileSync(join(dirs.config, "config.json"), JSON.stringify(config, null, 2) + "\n", { mode: 0o600 });
  return {
    ...process.env,
    UULDANA_CONFIG_DIR: dirs.config,
    UULDANA_DATA_DIR: dirs.data,
    UULDANA_CACHE_DIR: dirs.cache,
    PATH: [dirs.bin, dirname(process.execPath), process.env.PATH].filter(Boolean).join(delimiter),
  };
}

// A terminal for the session whose keyboard is a script: it reads what the agents show and types at each cue.
function scriptedUser(show: (text: string) => void): { terminal: { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream }; done(): void } {
  const keyboard = new PassThrough();
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, action: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      action();
    }, ms);
    timers.add(timer);
  };
  const type = (keys: string): void => {
    [...keys].forEach((key, i) => later(i * 25, () => keyboard.write(key)));
  };
  let seen = "";
  let next = 0;
  const screen = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = chunk.toString("utf8");
      show(text);
      seen = (seen + stripEscapes(text)).slice(-2000);
      const step = CUES[next];
      if (step && seen.includes(step.cue)) {
        next++;
        seen = "";
        later(step.delayMs, () => type(step.keys));
      }
      done();
    },
  });
  later(DEADLINE_MS, () => type("\x1b/exit\r"));
  // once the user stops the demo (uuldana then stops the agent), the script types nothing more
  const halt = (): void => {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    next = CUES.length;
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const signal of signals) process.on(signal, halt);
  return {
    terminal: { stdin: keyboard as unknown as NodeJS.ReadStream, stdout: screen as unknown as NodeJS.WriteStream },
    done: () => {
      halt();
      for (const signal of signals) process.off(signal, halt);
      keyboard.end();
    },
  };
}
