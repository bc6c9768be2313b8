import { closeSync, constants, openSync } from "node:fs";
import { createRequire } from "node:module";

import { UuldanaError } from "./errors.js";
import { IS_WINDOWS, signalGroup } from "./terminal.js";

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
}

interface NodePtyTerminal {
  pid: number;
  ptsName?: string;
  write(data: string | Buffer): void;
  resize(cols: number, rows: number): void;
  onData(listener: (data: Buffer | string) => void): { dispose(): void };
  onExit(listener: (event: { exitCode: number; signal?: number }) => void): { dispose(): void };
}

interface NodePty {
  spawn(file: string, args: string[], options: Record<string, unknown>): NodePtyTerminal;
}

let nodePty: NodePty | undefined;

// Starts the agent in a new pseudo-terminal. A second handle on the terminal's other side is held until the
// agent exits, so output it wrote just before exiting is still there to read (Linux drops it otherwise).
export function spawnAgent(options: SpawnOptions): AgentPty {
  const pty = loadNodePty();
  let child: NodePtyTerminal;
  try {
    child = pty.spawn(options.file, options.args, {
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
  let slave: number | undefined;
  if (!IS_WINDOWS && child.ptsName) {
    try {
      slave = openSync(child.ptsName, constants.O_RDWR | constants.O_NOCTTY);
    } catch {
      slave = undefined;
    }
  }
  const release = (): void => {
    if (slave !== undefined) closeSync(slave);
    slave = undefined;
  };
  const exited = new Promise<AgentExit>((resolve) => {
    child.onExit(({ exitCode, signal }) => {
      release();
      resolve({ exitCode, signal: signal ? signal : undefined });
    });
  });
  return {
    pid: child.pid,
    write: (data) => child.write(data),
    resize: (cols, rows) => child.resize(cols, rows),
    onData(listener) {
      const subscription = child.onData((data) => listener(typeof data === "string" ? Buffer.from(data) : data));
      return () => subscription.dispose();
    },
    exited,
    signal: (signal) => signalGroup(child.pid, signal),
    letGo: release,
  };
}

// --- internal ---

function loadNodePty(): NodePty {
  if (nodePty) return nodePty;
  try {
    nodePty = createRequire(import.meta.url)("node-pty") as NodePty;
    return nodePty;
  } catch (error) {
    throw new UuldanaError("E_PTY_UNAVAILABLE", "the terminal module node-pty could not be loaded, so no agent can run", {
      details: [`  ${(error as Error).message.split("\n")[0]}`],
      hint:
        "node-pty builds from source on Linux: install python3, make and a C++ compiler, then run " +
        '"npm rebuild node-pty" in uuldana\'s folder (with npm 11, approve its install script: "npm install-scripts approve node-pty")',
      exitCode: 1,
    });
  }
}
