import { closeSync, constants, existsSync, openSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { IS_WINDOWS, signalGroup } from "../base/process.js";
import { onProcessExit, takeMaster, type NodePtyInternals, type OwnMaster } from "./pty-internals.js";

// The one module that loads node-pty; everything else sees this small interface.
export interface AgentPty {
  readonly pid: number;
  write(data: string | Buffer): void;
  resize(cols: number, rows: number): void;
  onData(listener: (data: Buffer) => void): () => void;
  // Resolves once the agent has exited and its last output has been read.
  readonly exited: Promise<AgentExit>;
  signal(signal: NodeJS.Signals): boolean;
  // Stops holding the terminal open for the agent's last output: its exit is then noticed at once. For stops
  // uuldana itself asked for, whose last words matter less than time.
  letGo(): void;
  // Set where uuldana reads the terminal's output itself (SpawnOptions.ownReading): onData then never fires.
  readonly own?: OwnReading;
}

// The agent's terminal read by uuldana itself rather than by node-pty.
export interface OwnReading {
  // the terminal's other side, to read the agent's output from; a read of it waits until the agent writes
  readonly fd: number;
  // resolves once the agent's process has exited: what it wrote is then all there to read, and a read finds the
  // terminal closed after it (unless a process the agent left behind still holds the terminal)
  readonly processGone: Promise<void>;
  // Wakes a read that waits: a NUL byte (which terminals ignore) is written where the agent writes, after all it
  // wrote so far. The reader counts knocks and drops their bytes. False when the terminal takes no more output now
  // (its reader has that much still to read): the knock is to be made again.
  knock(): boolean;
  // uuldana has read the agent's output to its end: the terminal is let go and the exit reported
  end(): void;
}

export interface AgentExit {
  exitCode: number;
  signal: number | undefined;
}

export interface SpawnOptions {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  cols: number;
  rows: number;
  term: string;
  // uuldana reads the terminal's output itself (AgentPty.own) instead of node-pty's events
  ownReading?: boolean;
}

interface NodePtyTerminal {
  pid: number;
  ptsName?: string;
  fd?: number;
  write(data: string | Buffer): void;
  resize(cols: number, rows: number): void;
  onData(listener: (data: Buffer | string) => void): { dispose(): void };
  onExit(listener: (event: { exitCode: number; signal?: number }) => void): { dispose(): void };
  on(event: string, listener: (...args: unknown[]) => void): void;
}

interface NodePty {
  spawn(file: string, args: string[], options: Record<string, unknown>): NodePtyTerminal;
}

let nodePty: NodePty | undefined;

// how long no output must have come after the agent's exit before its terminal is let go
const DRAINED_MS = 15;

// Loads node-pty now, so that a broken install is reported before a session starts rather than after its banner.
// Only commands that run an agent call it: the rest must work without the native module.
export function checkNodePty(): void {
  loadNodePty();
}

// Starts the agent in a new pseudo-terminal. A second handle on the terminal's other side is held until the
// agent exits, so output it wrote just before exiting is still there to read (Linux drops it otherwise).
export function spawnAgent(options: SpawnOptions): AgentPty {
  const child = startChild(options);
  const held = new HeldSide(child.ptsName);
  const master = options.ownReading && !IS_WINDOWS ? takeMaster(child as NodePtyInternals) : undefined;
  const own = master ? ownReading(child, master, held) : undefined;
  if (!own) held.releaseWhenDrained(child);
  // once the agent is gone its terminal is closed: writing to it or resizing it has nothing left to do
  let gone = false;
  const exited = new Promise<AgentExit>((resolve) => {
    child.onExit(({ exitCode, signal }) => {
      gone = true;
      held.release();
      resolve({ exitCode, signal: signal ? signal : undefined });
    });
  });
  const input = IS_WINDOWS || typeof child.fd !== "number" ? undefined : new DirectInput(child.fd, master);
  return {
    pid: child.pid,
    write(data) {
      if (gone) return;
      if (input) input.write(typeof data === "string" ? Buffer.from(data, "utf8") : data);
      else child.write(data);
    },
    resize(cols, rows) {
      if (gone) return;
      try {
        child.resize(cols, rows);
      } catch (error) {
        // closed a moment before its exit is reported
        if (!/\bEBADF\b/.test((error as Error).message)) throw error;
      }
    },
    onData(listener) {
      const subscription = child.onData((data) => listener(typeof data === "string" ? Buffer.from(data) : data));
      return () => subscription.dispose();
    },
    exited,
    signal: (signal) => signalGroup(child.pid, signal),
    letGo: () => held.release(),
    ...(own ? { own } : {}),
  };
}

// --- internal ---

function startChild(options: SpawnOptions): NodePtyTerminal {
  try {
    return loadNodePty().spawn(options.file, options.args, {
      name: options.term,
      cols: options.cols,
      rows: options.rows,
      cwd: options.cwd,
      env: options.env,
      encoding: null,
    });
  } catch (error) {
    throw new UuldanaError("E_AGENT_START", `${options.file} could not start: ${(error as Error).message}`, {
      hint: `check that ${options.file} runs on its own`,
      exitCode: 1,
    });
  }
}

// The terminal read by uuldana itself: once the agent is gone, the other side uuldana held is let go, so the reader
// meets the terminal's end after the last output.
function ownReading(child: NodePtyTerminal, master: OwnMaster, held: HeldSide): OwnReading {
  let gone!: () => void;
  const processGone = new Promise<void>((resolve) => (gone = resolve));
  onProcessExit(child as NodePtyInternals, () => {
    held.release();
    gone();
  });
  return {
    fd: master.fd,
    processGone,
    knock: () => held.knock(),
    end() {
      held.release();
      master.close();
    },
  };
}

// The agent's side of its terminal, held open by uuldana while the agent runs (none on Windows).
class HeldSide {
  private fd: number | undefined;

  constructor(private readonly name: string | undefined) {
    if (IS_WINDOWS || !name) return;
    try {
      // never waited on: a knock on a terminal whose output is stopped (^S) is given up rather than hang uuldana
      this.fd = openSync(name, constants.O_RDWR | constants.O_NOCTTY | constants.O_NONBLOCK);
    } catch {
      this.fd = undefined;
    }
  }

  release(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  // Writes a NUL where the agent writes: through the side held, or, once that is let go, opened anew. False when
  // the terminal takes no more output now.
  knock(): boolean {
    const nul = Buffer.alloc(1);
    try {
      if (this.fd !== undefined) return writeSync(this.fd, nul) === 1;
      if (!this.name) return true;
      const fd = openSync(this.name, constants.O_WRONLY | constants.O_NOCTTY | constants.O_NONBLOCK);
      try {
        return writeSync(fd, nul) === 1;
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      // full for now; or else the terminal is gone, and its reader has met its end
      return (error as NodeJS.ErrnoException).code !== "EAGAIN";
    }
  }

  // On node-pty's event path. node-pty reports the exit only once the terminal has closed, which it cannot while
  // uuldana holds the other side: it learns of the exit first and waits for the close (for 200 ms at most). The
  // moment it starts waiting (it listens for "close") the agent is gone; its last output is read, and once none has
  // come for a moment the other side is let go, so the exit is reported without that wait.
  releaseWhenDrained(child: NodePtyTerminal): void {
    if (this.fd === undefined) return;
    let lastData = Date.now();
    child.onData(() => (lastData = Date.now()));
    const letGo = (): void => {
      if (this.fd === undefined) return;
      const idle = Date.now() - lastData;
      if (idle < DRAINED_MS) return void setTimeout(letGo, DRAINED_MS - idle).unref();
      // after one more look for output (the poll for input runs between a timer and an immediate), so output that
      // waited while the event loop was busy is read first
      setImmediate(() => {
        if (Date.now() - lastData >= DRAINED_MS) this.release();
        else letGo();
      }).unref();
    };
    onProcessExit(child as NodePtyInternals, () => setTimeout(letGo, DRAINED_MS).unref());
  }
}

// Input for the agent written to the terminal at once, in the same turn of the event loop as the key that brought
// it, rather than through a write on another thread; what the terminal cannot take yet waits, in order, and is
// tried again a millisecond later. Where uuldana reads the terminal itself it is blocking, for the output thread's
// reads; a write of the main thread makes it non-blocking for its moment, so an agent that reads no input never
// holds uuldana.
class DirectInput {
  private readonly waiting: Buffer[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly fd: number,
    private readonly master: OwnMaster | undefined,
  ) {}

  write(data: Buffer): void {
    if (data.length === 0) return;
    if (this.waiting.length) {
      this.waiting.push(Buffer.from(data));
      return;
    }
    const rest = this.attempt(data);
    if (rest) this.wait(Buffer.from(rest));
  }

  // --- internal ---

  // Writes what the terminal takes now; the part it did not take, if any.
  private attempt(data: Buffer): Buffer | undefined {
    this.master?.setBlocking(false);
    try {
      return this.attemptNow(data);
    } finally {
      this.master?.setBlocking(true);
    }
  }

  private attemptNow(data: Buffer): Buffer | undefined {
    let written = 0;
    try {
      while (written < data.length) written += writeSync(this.fd, data, written);
      return undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EAGAIN") return data.subarray(written);
      // the terminal is closed: the agent is gone, and its input with it
      this.waiting.length = 0;
      return undefined;
    }
  }

  private wait(rest: Buffer): void {
    this.waiting.push(rest);
    this.timer ??= setTimeout(() => this.drain(), 1);
  }

  private drain(): void {
    this.timer = undefined;
    while (this.waiting.length) {
      const rest = this.attempt(this.waiting[0]!);
      if (rest) {
        this.waiting[0] = rest;
        this.timer = setTimeout(() => this.drain(), 1);
        return;
      }
      this.waiting.shift();
    }
  }
}

function loadNodePty(): NodePty {
  if (nodePty) return nodePty;
  const require = createRequire(import.meta.url);
  let dir: string;
  try {
    dir = dirname(require.resolve("node-pty/package.json"));
  } catch (error) {
    throw unavailable([`  ${firstLine(error)}`], "node-pty is one of uuldana's dependencies: install uuldana again the way you installed it");
  }
  try {
    nodePty = require("node-pty") as NodePty;
    return nodePty;
  } catch (error) {
    throw unavailable(whyNotLoaded(dir, error), rebuildHint(dir));
  }
}

// On Linux node-pty comes without a prebuilt binary: npm compiles it from its install script. That is skipped with
// --ignore-scripts, or by an npm that runs only approved install scripts (npm install -g does not read uuldana's
// allowScripts), and fails without a compiler. Naming the missing file shows the fault is in the install.
function whyNotLoaded(dir: string, error: unknown): string[] {
  const platform = `${process.platform}-${process.arch}`;
  const built = ["Release", "Debug"].some((kind) => existsSync(join(dir, "build", kind, "pty.node")));
  if (built || existsSync(join(dir, "prebuilds", platform))) return [`  ${dir}: ${firstLine(error)}`];
  return [
    `  node-pty was never compiled: ${join(dir, "build", "Release", "pty.node")} is missing, and it ships no prebuilt binary for ${platform}`,
    "  npm compiles it while installing uuldana, unless install scripts are skipped or python3, make or a C++ compiler is missing",
  ];
}

// npm rebuild run in the folder that holds node_modules/node-pty reads that folder's package.json (uuldana's own in a
// global install or a clone), whose allowScripts approves node-pty's build; run elsewhere (npm rebuild -g), npm
// counts the script as unapproved.
function rebuildHint(dir: string): string {
  const folder = basename(dirname(dir)) === "node_modules" ? dirname(dirname(dir)) : dir;
  return `with python3, make and a C++ compiler (g++) installed, run: cd "${folder}" && npm rebuild node-pty`;
}

function unavailable(details: string[], hint: string): UuldanaError {
  // exit 2: like a configuration error, the setup must change before any agent can run
  return new UuldanaError("E_PTY_UNAVAILABLE", "the terminal module node-pty could not be loaded, so no agent can run", { details, hint, exitCode: 2 });
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
}
