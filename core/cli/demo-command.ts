import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { PassThrough, Writable } from "node:stream";

import { stripEscapes } from "../base/ansi.js";
import { packageRoot } from "../base/paths.js";
import { safeOutput } from "../base/safe-text.js";
import { loadContext } from "../config/context.js";
import { PathLookup } from "../registry/detect.js";
import { runSession } from "../session/session.js";
import { findSession } from "../session/sessions.js";
import { checkNodePty } from "../terminal/pty.js";
import { result, type CommandResult } from "./result.js";
import { renderHistory } from "./session-history.js";
import { describeEnding, describeEvent } from "./session-report.js";

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
export async function demoCommand(options: { keep?: boolean; stop?: AbortSignal }): Promise<CommandResult> {
  checkNodePty();
  const folder = mkdtempSync(join(tmpdir(), "uuldana-demo-"));
  // Ctrl+C stops the demo at any moment: the script stops typing, and the session ends after the agent is left
  const stop = options.stop ?? new AbortController().signal;
  const screen = new DemoScreen();
  try {
    const env = prepare(folder);
    const context = await loadContext({ env, cwd: join(folder, "project") });
    screen.show(`uuldana demo: a scripted user types for you (your keyboard is not used; Ctrl+C stops the demo).\n`);
    screen.show(`Two stand-in agents; config, data and cache in ${folder}\n`);
    const user = scriptedUser(screen, stop);
    const session = await runSession(context, {
      agentArgs: [],
      terminal: user.terminal,
      stop,
      // the command key is no use here: the keyboard is the script's
      onEvent: (event) => describeEvent(event, { commandKey: false }).forEach((line) => screen.line(safeOutput(line))),
    }).finally(() => user.done());
    screen.end();
    const failedOver = session.runs.some((run) => run.start === "failover");
    const history = renderHistory(context.dirs.data, findSession(context.dirs.data, session.sessionId)).trimEnd();
    // a line of its own, even after the ^C a terminal echoes
    const text = ["", describeEnding(session).trimEnd(), "", `$ uuldana sessions show ${session.sessionId}`, history, ""];
    if (options.keep) {
      text.push(`The demo's files are kept in ${folder}. To look around:`, `  UULDANA_CONFIG_DIR=${env.UULDANA_CONFIG_DIR} UULDANA_DATA_DIR=${env.UULDANA_DATA_DIR} uuldana sessions`);
    } else text.push("The demo's temporary folder, with the files named above, has been removed (uuldana demo --keep keeps it).");
    if (failedOver) text.push(...await nextStep());
    const output = text.join("\n") + "\n";
    if (stop.aborted && !failedOver) return result(output, "uuldana: the demo was stopped before the failover\n", session.exitCode);
    if (!failedOver) return result(output, "uuldana: the demo did not reach the second agent\n", 1);
    return result(output, "", session.exitCode);
  } finally {
    if (!options.keep) rmSync(folder, { recursive: true, force: true });
  }
}

// --- internal ---

// What to do after the demo, with a command that works: uuldana run where uuldana is on PATH, else the command that
// puts this uuldana there (npm link in its folder) first.
async function nextStep(): Promise<string[]> {
  if ((await new PathLookup(process.env, process.platform).find(["uuldana"])).path) return ["That was a failover. Run uuldana run in a project to start your own agents."];
  return [
    "That was a failover. uuldana is not on your PATH yet: this command puts it there, then run uuldana run in a project to start your own agents:",
    `  cd "${packageRoot()}" && npm link`,
  ];
}

// What the demo shows: the agents' output as it comes on a terminal; without one, whole lines with no escape sequences
// and no carriage returns, so a log reads cleanly.
class DemoScreen {
  private readonly color = Boolean(process.stdout.isTTY);
  private partial = "";

  show(text: string): void {
    if (this.color) {
      process.stdout.write(text);
      return;
    }
    const lines = (this.partial + text).split("\n");
    this.partial = lines.pop()!;
    if (lines.length) process.stdout.write(lines.map((line) => stripEscapes(line).replace(/\r/g, "")).join("\n") + "\n");
  }

  // one of uuldana's own lines, set apart from the agents' output
  line(text: string): void {
    this.show(this.color ? `\r\n\x1b[36m${text}\x1b[0m\r\n` : `\n${text}\n`);
  }

  end(): void {
    if (this.partial) this.show("\n");
  }
}

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
    const body = readFileSync(join(shipped, "agents", `${id}.mjs`), "utf8").replace(/^#!.*\n/, "");
    const shebang = /\s/.test(process.execPath) ? "#!/usr/bin/env node" : `#!${process.execPath}`;
    const program = join(dirs.bin, `uuldana-${id}`);
    writeFileSync(program, `${shebang}\n${body}`);
    chmodSync(program, 0o700);
  }
  writeFileSync(join(dirs.config, "config.json"), JSON.stringify({ providers: [...AGENTS], auto_detect: false }, null, 2) + "\n", { mode: 0o600 });
  return {
    ...process.env,
    UULDANA_CONFIG_DIR: dirs.config,
    UULDANA_DATA_DIR: dirs.data,
    UULDANA_CACHE_DIR: dirs.cache,
    PATH: [dirs.bin, dirname(process.execPath), process.env.PATH].filter(Boolean).join(delimiter),
  };
}

// A terminal for the session whose keyboard is a script: it reads what the agents show and types at each cue, until
// the demo is stopped.
function scriptedUser(screen: DemoScreen, stopped: AbortSignal): { terminal: { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream }; done(): void } {
  const keyboard = new PassThrough();
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, action: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!stopped.aborted) action();
    }, ms);
    timers.add(timer);
  };
  const type = (keys: string): void => {
    [...keys].forEach((key, i) => later(i * 25, () => keyboard.write(key)));
  };
  let seen = "";
  let next = 0;
  const display = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = chunk.toString("utf8");
      screen.show(text);
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
  return {
    terminal: { stdin: keyboard as unknown as NodeJS.ReadStream, stdout: display as unknown as NodeJS.WriteStream },
    done: () => {
      for (const timer of timers) clearTimeout(timer);
      keyboard.end();
    },
  };
}
