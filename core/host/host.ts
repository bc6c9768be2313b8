import { CommandPrompt } from "./command-prompt.js";
import { DrawnLines, type DrawnAround } from "./drawn-lines.js";
import { Detector, type DetectorEvent } from "../reader/detector.js";
import type { Verdict } from "../reader/reader.js";
import { commandKeyBytes } from "./keys.js";
import { spawnAgent, type AgentPty } from "../terminal/pty.js";
import { Screen } from "../terminal/screen.js";
import { stopAgent, type ExitSteps, type StopResult } from "./stop.js";
import { TITLE_POP, TITLE_PUSH, holdTerminal, releaseTerminal, restoreSequence, setRawInput, titleSequence } from "../terminal/tty.js";
import { formatDuration } from "../base/time.js";
import { TitleFilter } from "./title.js";
import { typePrompt, type TypedPromptResult } from "./typed-prompt.js";
import { TypedTurns } from "./typed-turns.js";

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
  // the user typed something to the agent (any key)
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
  // Stops the agent gracefully (exit keys, then signals) and waits for the run to end.
  stop(options?: { keys?: boolean }): Promise<StopResult>;
  // Marks that limit-like text was ignored: the title gains ⚠ until the run ends.
  warn(on: boolean): void;
  // After a stop the session left to the agent: its screen is read on for a new limit message.
  readOn(): void;
  // The run's last drawn lines, redacted (see DrawnLines.tail).
  drawnTail(): string[];
  // Resolves at the next turn boundary: the agent quiet for quietMs and not showing that it works, uuldana's prompt
  // closed, and the user's input line empty. Never resolves once the run has ended.
  atTurnBoundary(quietMs: number): Promise<void>;
}

// How often a turn boundary is looked for while one is awaited (and only then).
const BOUNDARY_LOOK_MS = 250;

const HELD_OUTPUT_LIMIT = 8 * 1024 * 1024;
export function startRun(options: HostOptions): Run {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const interactive = Boolean(stdin.isTTY && stdout.isTTY);
  const size = interactive
    ? { cols: stdout.columns || 80, rows: stdout.rows || 24 }
    : { cols: Number(process.env.COLUMNS) || 80, rows: Number(process.env.LINES) || 24 };
  const started = Date.now();
  const screen = new Screen({ ...size, scrollback: options.scrollback });
  let agent: AgentPty;
  try {
    agent = spawnAgent({ file: options.file, args: options.args, env: options.env, cwd: options.cwd, ...size, term: options.env.TERM || "xterm-256color" });
  } catch (error) {
    // the model's thread would otherwise keep uuldana alive after it has reported the failed start
    void screen.dispose();
    throw error;
  }

  let warned = false;
  // uuldana's part first, the ⚠ mark in it: an agent's own title can neither hide the mark nor fake it
  const formatTitle = (agentTitle: string): string =>
    `uuldana · ${options.entry} · ${options.level}${warned ? " ⚠" : ""}${agentTitle ? ` · ${agentTitle}` : ""}`;
  const titles = new TitleFilter(formatTitle);
  const key = { ...commandKeyBytes(options.commandKey), name: options.commandKey };
  let prompt: CommandPrompt | undefined;
  let promptOwnsAltScreen = false;
  let held: Buffer[] = [];
  let heldBytes = 0;
  let heldDropped = 0;
  let stopping: Promise<StopResult> | undefined;
  // the conversation as it stood when uuldana began to stop the agent
  let atStop: string | undefined;
  let typed: Promise<TypedPromptResult> | undefined;
  let exited = false;
  // the agent's process has ended (its last output may still be on the way to the screen model)
  let gone = false;

  const out = (data: Buffer | string): void => {
    if (prompt) {
      if (heldBytes + data.length > HELD_OUTPUT_LIMIT) heldDropped += data.length;
      else {
        held.push(Buffer.from(data));
        heldBytes += data.length;
      }
      return;
    }
    stdout.write(data);
  };

  const describe = options.describe ?? { header: () => [], status: () => [] };
  let detection: DetectorEvent | undefined;
  const detector = options.detect
    ? new Detector({
        quietMs: options.detect.quietSeconds * 1000,
        dismissMs: options.detect.dismissSeconds * 1000,
        classify: options.detect.classify,
        busy: options.detect.busy,
      })
    : undefined;
  const drawnLines = new DrawnLines(options.redactLines);
  // the lines each event is told with: a candidate's are found in the batch it came in (batchSize lines)
  const around = (event: DetectorEvent, batchSize: number): DrawnAround =>
    event.type === "candidate" ? drawnLines.candidate(event.text, batchSize) : drawnLines.outcome();
  let detectTimer: NodeJS.Timeout | undefined;
  // at a deadline: a quiet stop waits for the visible rows when the provider's busy test is to see them
  const checkDeadline = (): void => {
    // one clock reading for both: a millisecond between them could pass the quiet deadline after the question of
    // whether the busy test must see the screen was answered no
    const now = Date.now();
    if (!detector!.needsScreen(now)) return onDetected(detector!.tick(now), 0);
    void screen.read().then(({ visible }) => {
      if (!exited) onDetected(detector!.tick(Date.now(), visible), 0);
    });
  };
  const onDetected = (events: DetectorEvent[], batchSize: number): void => {
    for (const event of events) {
      if (event.type !== "candidate") detection = event;
      const drawn = around(event, batchSize);
      options.onDetection?.(event, drawn);
    }
    clearTimeout(detectTimer);
    const deadline = detector?.nextDeadline();
    if (deadline !== undefined && !exited) detectTimer = setTimeout(checkDeadline, Math.max(0, deadline - Date.now()));
  };
  if (detector && options.firstPrompt) detector.notePrompt(options.firstPrompt);
  if (detector) {
    screen.onDrawn((drawn) => {
      drawnLines.add(drawn.lines);
      onDetected(detector.observe(drawn, Date.now()), drawn.lines.length);
      options.onDrawn?.(drawn.lines);
    });
  }
  const promptContext = {
    header: () => [
      `uuldana · ${options.entry} · ${options.level} · pid ${agent.pid} · running ${formatDuration(Date.now() - started)}`,
      ...describe.header(),
    ],
    status: () => [
      `entry ${options.entry}, level ${options.level}, pid ${agent.pid}`,
      `command: ${[options.file, ...options.args].join(" ")}`,
      `screen ${screen.cols}x${screen.rows}${screen.modes.altScreen ? ", alternate screen" : ""}; agent title "${titles.agentTitle}"`,
      ...describe.status(),
    ],
    ...(describe.agent ? { agent: describe.agent } : {}),
  };

  const openPrompt = (rest: Buffer): void => {
    prompt = new CommandPrompt((text) => stdout.write(text), promptContext, key, () => screen.cols);
    promptOwnsAltScreen = !screen.modes.altScreen;
    if (promptOwnsAltScreen) stdout.write("\x1b[?1049h");
    prompt.open();
    if (rest.length) handlePrompt(rest);
  };

  const closePrompt = (sendKey: Buffer | undefined): void => {
    if (!prompt) return;
    prompt = undefined;
    if (promptOwnsAltScreen) stdout.write("\x1b[?1049l");
    if (screen.modes.cursorHidden) stdout.write("\x1b[?25l");
    const pending = Buffer.concat(held);
    held = [];
    heldBytes = 0;
    if (pending.length) stdout.write(pending);
    // an agent that has ended has no screen to redraw and takes no key
    if (gone) return;
    if (!promptOwnsAltScreen) {
      // a full-screen agent redraws itself when its size changes
      agent.resize(screen.cols, Math.max(1, screen.rows - 1));
      setTimeout(() => !gone && agent.resize(screen.cols, screen.rows), 40);
    }
    if (sendKey) agent.write(sendKey);
  };

  const handlePrompt = (data: Buffer): void => {
    const outcome = prompt!.input(data);
    if (outcome === "close") closePrompt(undefined);
    else if (outcome === "send-key") closePrompt(data);
  };

  const userTurns = new TypedTurns(options.onUserTurn);
  let typedAnything = false;
  // The key path: the command-key check, then the bytes go to the agent; what uuldana notes of them comes after.
  const onInput = (data: Buffer): void => {
    if (exited) return;
    const toAgent = !prompt;
    if (prompt) handlePrompt(data);
    else if (!interactive) agent.write(data);
    else {
      let at = data.indexOf(key.byte);
      let length = 1;
      if (at === -1) {
        at = data.indexOf(key.kitty);
        length = key.kitty.length;
      }
      if (at === -1) agent.write(data);
      else {
        if (at > 0) agent.write(data.subarray(0, at));
        openPrompt(data.subarray(at + length));
      }
    }
    typedAnything = true;
    const text = data.toString("utf8");
    detector?.noteInput(text.replace(/[\x00-\x1f\x7f]/g, " "));
    if (toAgent) {
      userTurns.add(text);
      options.onKey?.();
    }
  };

  const onResize = (): void => {
    const cols = stdout.columns || screen.cols;
    const rows = stdout.rows || screen.rows;
    screen.resize(cols, rows);
    agent.resize(cols, rows);
  };

  // whether the agent's last output ended its line: uuldana's own lines after the run begin on a line of their own
  let endedLine = true;
  // when the agent last drew anything, for a turn boundary
  let lastOutput = Date.now();
  const stopData = agent.onData((chunk) => {
    lastOutput = Date.now();
    if (chunk.length) endedLine = chunk[chunk.length - 1] === 0x0a;
    const filtered = titles.filter(chunk);
    if (filtered.length) out(filtered);
    screen.queue(chunk);
  });
  const stopReplies = interactive ? () => {} : screen.onReply((reply) => !exited && agent.write(reply));

  const restore = (): void => {
    try {
      if (prompt) closePrompt(undefined);
    } finally {
      if (interactive) {
        setRawInput(false);
        // an agent on the normal screen that left its cursor mid-line: the next line is uuldana's, not a tail of its own
        const modes = screen.modes;
        const newline = !modes.altScreen && !endedLine ? "\r\n" : "";
        stdout.write(restoreSequence(modes) + TITLE_POP + newline);
      }
    }
  };
  holdTerminal(restore);

  if (interactive) {
    stdout.write(TITLE_PUSH + titleSequence(formatTitle("")));
    setRawInput(true);
    stdout.on("resize", onResize);
  }
  stdin.on("data", onInput);
  stdin.resume();

  if (options.typedPrompt) {
    typed = typePrompt(agent, screen, options.typedPrompt.text, options.typedPrompt.ready, { isDone: () => exited });
  }

  // the run's end, taken apart in one place and once: whatever fails on the way, the user's terminal is given back
  // and the model's thread ends, so nothing keeps uuldana waiting
  let woundUp = false;
  const windUp = (): void => {
    if (woundUp) return;
    woundUp = true;
    exited = true;
    clearTimeout(detectTimer);
    stopData();
    stopReplies();
    titles.end();
    stdin.off("data", onInput);
    stdin.pause();
    stdout.off("resize", onResize);
    releaseTerminal(restore);
  };
  const result = agent.exited.then(async (exit) => {
    gone = true;
    try {
      const final = await screen.read({ conversation: true });
      // the detector's last events may not schedule another look
      exited = true;
      if (detector) {
        for (const event of detector.exit(exit.signal ? 128 + exit.signal : exit.exitCode, Date.now())) {
          detection = event;
          options.onDetection?.(event, around(event, 0));
        }
      }
      windUp();
      const stopped = stopping ? await stopping : undefined;
      const typedResult = typed ? await typed : undefined;
      return {
        exitCode: exit.exitCode,
        signal: exit.signal,
        stop: stopped,
        typedPrompt: typedResult,
        durationMs: Date.now() - started,
        detection,
        userTurns: userTurns.turns,
        typed: typedAnything,
        conversation: atStop ?? final.conversation,
        lastScreen: final.visible,
      };
    } finally {
      windUp();
      await screen.dispose();
    }
  });

  return {
    agent,
    screen,
    result,
    stop(stopOptions) {
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
      warned = on;
      if (interactive && !exited) stdout.write(titleSequence(formatTitle(titles.agentTitle)));
    },
    drawnTail: () => drawnLines.tail(),
    readOn: () => detector?.reopen(),
    atTurnBoundary(quietMs) {
      return new Promise((resolve) => {
        const look = (): void => {
          if (exited) return;
          const again = (): void => void setTimeout(look, BOUNDARY_LOOK_MS).unref();
          if (Date.now() - lastOutput < quietMs || prompt || !userTurns.idle) return again();
          void screen.read().then(({ visible }) => {
            if (exited) return;
            if (Date.now() - lastOutput < quietMs || !userTurns.idle || options.detect?.busy?.(visible)) again();
            else resolve();
          });
        };
        look();
      });
    },
  };
}
