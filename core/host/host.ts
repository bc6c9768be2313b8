import { formatDuration } from "../base/time.js";
import type { DetectorEvent } from "../reader/detector.js";
import type { Verdict } from "../reader/reader.js";
import { spawnAgent, type AgentPty } from "../terminal/pty.js";
import { Screen } from "../terminal/screen.js";
import { AgentOutput } from "./agent-output.js";
import type { PromptContext } from "./command-prompt.js";
import { Disposables } from "./disposables.js";
import { outputOnThread } from "./output-thread.js";
import type { DrawnAround } from "./drawn-lines.js";
import { showKeyHint } from "./key-hint.js";
import { commandKeyBytes } from "./keys.js";
import { PromptOverlay } from "./prompt-overlay.js";
import type { PromptQuestion } from "./command-prompt.js";
import { RunDetection } from "./run-detection.js";
import { stopAgent, type ExitSteps, type StopResult } from "./stop.js";
import { waitForTurnBoundary } from "./turn-boundary.js";
import { typePrompt, type TypedPromptResult } from "./typed-prompt.js";
import { UserInput } from "./user-input.js";
import { takeUserTerminal, userTerminal } from "./user-terminal.js";

// One agent run in a pseudo-terminal, passed through to the user's terminal untouched but for its title.
export interface HostOptions {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  entry: string;
  level: string;
  exit?: ExitSteps;
  commandKey: string;
  scrollback?: number;
  // a first prompt to type once the agent's screen shows it may be pasted
  typedPrompt?: { text: string; ready: (screen: readonly string[]) => boolean };
  // the first prompt handed to the agent, however it is given: its echo on screen is not the agent's own text
  firstPrompt?: string;
  // lines about the session for the command-key header and /status
  describe?: { header(): string[]; status(): string[]; agent?: (args: string) => string[] };
  stdin?: NodeJS.ReadStream;
  stdout?: NodeJS.WriteStream;
  // reading the agent's screen for a gone allowance; events go to onDetection. busy: the provider's test that its
  // screen shows it working, asked with the visible rows before a stop for quiet
  detect?: {
    quietSeconds: number;
    dismissSeconds: number;
    classify: (text: string) => Verdict;
    busy?: (screen: readonly string[]) => boolean;
  };
  // with each event, the lines drawn around its candidate: before it and its own at the candidate, after it at its
  // outcome (stop, dismissed, left)
  onDetection?: (event: DetectorEvent, drawn: DrawnAround) => void;
  // the session's redactor for lines (one line out for each line in), for the lines handed out of the run
  redactLines?: (lines: readonly string[]) => string[];
  // after each batch of lines the agent drew (while its screen is read for a gone allowance), with the lines new in it
  onDrawn?: (lines: readonly string[]) => void;
  // each line the user submits, as it is submitted
  onUserTurn?: (text: string) => void;
  // the user typed something to the agent (any key; a reply of the terminal's to the agent's query is none)
  onKey?: () => void;
}

export interface RunResult {
  exitCode: number;
  signal: number | undefined;
  stop: StopResult | undefined;
  typedPrompt: TypedPromptResult | undefined;
  durationMs: number;
  // the lines the user submitted (typed, then Enter), and whether the user typed anything at all
  userTurns: string[];
  typed: boolean;
  // the lines the user submitted while uuldana was stopping the agent: held back from it, no agent has them
  heldTurns: string[];
  // the line left half typed while uuldana was stopping the agent, printable text only ('' if none)
  heldPartial: string;
  // what the detector decided (the stop, or the last ignored limit-like text), if anything
  detection: DetectorEvent | undefined;
  // what the screen model read: the whole conversation and the last screen
  conversation: string;
  lastScreen: string[];
}

export interface Run {
  readonly agent: AgentPty;
  readonly screen: Screen;
  readonly result: Promise<RunResult>;
  // Stops the agent gracefully (exit keys, then signals) and waits for the run to end. From the call on, the user's
  // keys are held back from the agent (RunResult's heldTurns and heldPartial).
  stop(options?: { keys?: boolean }): Promise<StopResult>;
  // Marks that limit-like text was ignored: the title gains ⚠ until the run ends.
  warn(on: boolean): void;
  // Says in uuldana's part of the title what it waits on (the agent's question, its sign-in), or nothing.
  note(text: string | undefined): void;
  // After a stop the session left to the agent: its screen is read on for a new limit message.
  readOn(): void;
  // Puts a question to the user in uuldana's prompt: the key of the choice made, or undefined when no one answered
  // within timeoutMs or no one can answer (no terminal, the run over).
  ask(question: PromptQuestion, timeoutMs: number): Promise<string | undefined>;
  // The run's last drawn lines, redacted (see DrawnLines.tail).
  drawnTail(): string[];
  // Resolves at the next turn boundary: the agent quiet for quietMs and not showing that it works, uuldana's prompt
  // closed, and the user's input line empty. Never resolves once the run has ended.
  atTurnBoundary(quietMs: number): Promise<void>;
}

// One agent run: the agent spawned in a pseudo-terminal, its output passed through and read, the user's keys passed
// in, until the agent exits; everything the run held is let go in one place whichever way it ends.
export function startRun(options: HostOptions): Run {
  const terminal = userTerminal(options);
  const { stdout, interactive } = terminal;
  const started = Date.now();
  const screen = new Screen({ ...terminal.size, scrollback: options.scrollback });
  const agent = spawnFor(options, screen, terminal.size, outputOnThread(stdout));
  const owned = new Disposables();
  const state = { gone: false, ended: false };
  const windUp = (): void => {
    state.ended = true;
    owned.dispose();
  };

  const output = new AgentOutput(agent, screen, stdout, `uuldana · ${options.entry} · ${options.level}`);
  const detection = new RunDetection(screen, options);
  const key = { ...commandKeyBytes(options.commandKey), name: options.commandKey };
  const context = promptContext(options, { agent, screen, output, started });
  const overlay = new PromptOverlay({ stdout, screen, agent, output, context, key, gone: () => state.gone, sendKey: (bytes) => input.send(bytes) });
  const input = new UserInput({ agent, overlay, detection, interactive, key, onKey: options.onKey, onUserTurn: options.onUserTurn });
  // let go in the reverse order: the keys, the screen model's answers, the detector's looks, the output, and last
  // the user's terminal
  owned.add(takeUserTerminal(terminal, { agent, screen, output, overlay }));
  owned.add(() => output.end());
  owned.add(() => detection.end());
  // without a real terminal, the screen model answers the agent's queries
  if (!interactive) owned.add(screen.onReply((reply) => agent.write(reply)));
  owned.add(input.listen(terminal.stdin));
  // a full-screen agent hides the line that named the command key: it is named again, once, over the agent's screen
  if (interactive) {
    const hint = { stdout, screen, agent, keyName: key.name, lastOutput: () => output.lastOutput, typed: () => input.typed, promptOpen: () => overlay.isOpen, gone: () => state.gone };
    owned.add(showKeyHint(hint));
  }
  const typed = options.typedPrompt ? typePrompt(agent, screen, options.typedPrompt.text, options.typedPrompt.ready, { isDone: () => state.ended }) : undefined;

  let stopping: Promise<StopResult> | undefined;
  // the conversation as it stood when uuldana began to stop the agent
  let atStop: string | undefined;
  const result = agent.exited.then(async (exit): Promise<RunResult> => {
    state.gone = true;
    try {
      const final = await screen.read({ conversation: true });
      // the run has ended for what the detector's last events do (a warn() draws no title)
      state.ended = true;
      detection.exit(exit.signal ? 128 + exit.signal : exit.exitCode);
      windUp();
      return {
        exitCode: exit.exitCode,
        signal: exit.signal,
        stop: await stopping,
        typedPrompt: await typed,
        durationMs: Date.now() - started,
        detection: detection.event,
        userTurns: input.turns.turns,
        typed: input.typed,
        heldTurns: input.turns.held,
        heldPartial: input.heldPartial,
        conversation: atStop ?? final.conversation,
        lastScreen: final.visible,
      };
    } finally {
      // whatever fails on the way, the user's terminal is given back and the screen model's emulator let go
      windUp();
      await screen.dispose();
    }
  });

  return {
    agent,
    screen,
    result,
    stop(stopOptions) {
      // the user's keys are held from now on: they would mix with the exit keys, and the agent is leaving
      input.hold();
      // the conversation is what the screen held before uuldana typed anything to leave: its exit keys, the keys that
      // close a menu and what the agent answered to them are not the user's
      stopping ??= screen.read({ conversation: true }).then(
        ({ conversation }) => {
          atStop ??= conversation;
          return stopAgent(agent, options.exit, stopOptions);
        },
        () => stopAgent(agent, options.exit, stopOptions),
      );
      return stopping;
    },
    warn(on) {
      const title = output.warn(on);
      if (interactive && !state.ended) stdout.write(title);
    },
    note(text) {
      const title = output.noteTitle(text);
      if (interactive && !state.ended) stdout.write(title);
    },
    drawnTail: () => detection.drawn.tail(),
    readOn: () => detection.reopen(),
    ask: (question, timeoutMs) => (interactive && !state.ended ? overlay.ask(question, timeoutMs) : Promise.resolve(undefined)),
    atTurnBoundary: (quietMs) =>
      waitForTurnBoundary(
        { screen, ended: () => state.ended, lastOutput: () => output.lastOutput, inputIdle: () => input.idle, busy: options.detect?.busy },
        quietMs,
      ),
  };
}

// --- internal ---

function spawnFor(options: HostOptions, screen: Screen, size: { cols: number; rows: number }, ownReading: boolean): AgentPty {
  try {
    const term = options.env.TERM || "xterm-256color";
    return spawnAgent({ file: options.file, args: options.args, env: options.env, cwd: options.cwd, ...size, term, ownReading });
  } catch (error) {
    // the screen model's emulator is let go with the run that never started
    void screen.dispose();
    throw error;
  }
}

// What uuldana's prompt shows: the header above it and /status, with the session's own lines.
function promptContext(options: HostOptions, run: { agent: AgentPty; screen: Screen; output: AgentOutput; started: number }): PromptContext {
  const describe = options.describe ?? { header: () => [], status: () => [] };
  const { agent, screen, output } = run;
  return {
    header: () => [
      `uuldana · ${options.entry} · ${options.level} · pid ${agent.pid} · running ${formatDuration(Date.now() - run.started)}`,
      ...describe.header(),
    ],
    status: () => [
      `entry ${options.entry}, level ${options.level}, pid ${agent.pid}`,
      `command: ${[options.file, ...options.args].join(" ")}`,
      `screen ${screen.cols}x${screen.rows}${screen.modes.altScreen ? ", alternate screen" : ""}; agent title "${output.agentTitle}"`,
      ...describe.status(),
    ],
    ...(describe.agent ? { agent: describe.agent } : {}),
  };
}
