import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { MessageChannel, Worker, type MessagePort } from "node:worker_threads";

import { IS_WINDOWS } from "../base/process.js";
import type { OwnReading } from "../terminal/pty.js";
import { RingReader, ringMemory } from "../terminal/shared-ring.js";
import { CONTROL_SLOTS, DONE, GONE, HOLD, KNOCKS, STOP, WORDS, WRITING, type FromOutputThread, type OutputThreadSetup } from "./output-thread-protocol.js";

// the ring between the output thread and the main thread: a flood that outruns the screen model waits in it
const RING_BYTES = 4 * 1024 * 1024;
// how often the main thread takes what came, and after how many looks that found nothing it waits to be told
const DRAIN_MS = 8;
const QUIET_LOOKS = 25;
// how long uuldana's prompt waits for the output thread's write under way before it draws
const HOLD_WAIT_MS = 100;
// the thread keeps little on its heap (a read's copy, a title being read): a small one keeps its memory small
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 16 };
// how soon a knock the terminal could not take is made again, at first and at most
const KNOCK_AGAIN_MS = 5;
const KNOCK_AGAIN_MAX_MS = 250;
// how long an end of the run waits for the output thread's last write
const STOP_WAIT_MS = 100;

// Which way the agent's output goes, decided here alone: on Linux and macOS, to a real file descriptor (the user's
// terminal, or the pipe uuldana writes to), it is passed through by an output thread of its own; elsewhere (Windows,
// a stream in a test) node-pty's events carry it on the main thread.
export function outputOnThread(stdout: NodeJS.WriteStream): boolean {
  return !IS_WINDOWS && typeof (stdout as { fd?: unknown }).fd === "number" && workerFile() !== undefined;
}

// The main thread's side of the output thread: what the agent wrote comes out of the ring every few milliseconds
// (never a wake per read), and the thread is told when uuldana's prompt covers the screen and what its title says.
export class OutputThread {
  // resolves once the agent's output has ended and all of it has been handed on
  readonly ended: Promise<void>;
  agentTitle = "";
  private readonly worker: Worker;
  private readonly control: Int32Array;
  private readonly ring: RingReader;
  private readonly port: MessagePort;
  private timer: NodeJS.Timeout | undefined;
  private quietLooks = 0;
  private done = false;

  constructor(
    own: OwnReading,
    out: number,
    titlePrefix: string,
    private readonly onBytes: (chunk: Buffer) => void,
    // the output still held back when it ended, to be written once uuldana's prompt closes
    onHeld: (data: Buffer) => void,
  ) {
    const memory = ringMemory(RING_BYTES);
    const control = new SharedArrayBuffer(CONTROL_SLOTS * 4);
    this.control = new Int32Array(control);
    this.ring = new RingReader(memory);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const setup: OutputThreadSetup = { fd: own.fd, out, control, titlePrefix };
    this.worker = new Worker(workerFile()!, { workerData: { ...setup, ring: memory, port: port2 }, transferList: [port2], execArgv: [], resourceLimits: THREAD_LIMITS });
    let finish!: () => void;
    this.ended = new Promise<void>((resolve) => (finish = resolve));
    const end = (): void => {
      if (this.done) return;
      this.done = true;
      this.stopLooking();
      this.drain();
      finish();
      own.end();
    };
    this.worker.on("message", (word: FromOutputThread) => {
      if (word.agentTitle !== undefined) this.agentTitle = word.agentTitle;
      if (word.wake) this.look();
      // once the run is stopped, nothing more the thread read reaches the user's terminal
      if (word.held && Atomics.load(this.control, STOP) === 0) onHeld(Buffer.from(word.held.buffer, word.held.byteOffset, word.held.byteLength));
      if (word.end) end();
    });
    // a thread that failed or was ended leaves the output where it stopped
    this.worker.on("error", end);
    this.worker.on("exit", () => {
      running.delete(this);
      end();
    });
    // a knock the terminal could not take yet (it is full, so the thread has reading to do; or its output is
    // stopped) is made again later, each time twice as late, until the thread has ended: the one after the agent's
    // exit is what ends it
    const knock = (wait: number): void => {
      Atomics.add(this.control, KNOCKS, 1);
      if (own.knock()) return;
      Atomics.sub(this.control, KNOCKS, 1);
      if (!this.done) setTimeout(() => knock(Math.min(wait * 2, KNOCK_AGAIN_MAX_MS)), wait).unref();
    };
    this.knock = () => knock(KNOCK_AGAIN_MS);
    running.add(this);
    void own.processGone.then(() => {
      Atomics.store(this.control, GONE, 1);
      this.knock();
    });
    this.look();
  }

  // uuldana's prompt is about to cover the screen: returns once the thread writes no more of the agent's output.
  hold(): void {
    if (this.done) return;
    Atomics.store(this.control, HOLD, 1);
    const deadline = Date.now() + HOLD_WAIT_MS;
    while (Atomics.load(this.control, WRITING) === 1 && Date.now() < deadline) Atomics.wait(this.control, WRITING, 1, 5);
  }

  // The prompt has closed: the thread writes what it held, then passes the output through again.
  release(): void {
    Atomics.store(this.control, HOLD, 0);
    if (!this.done) this.knock();
  }

  // uuldana's part of the title changed: the agent's next title follows the new one.
  titlePrefix(text: string): void {
    this.port.postMessage({ titlePrefix: text });
    Atomics.store(this.control, WORDS, 1);
  }

  // The run is over, or uuldana is ending: the thread ends at once, whatever is left unread; returns once it writes
  // no more to the user's terminal (or after a moment, if a write of its own does not return).
  stop(): void {
    this.stopLooking();
    if (Atomics.exchange(this.control, STOP, 1) === 1 || Atomics.load(this.control, DONE) === 1) return;
    this.knock();
    const deadline = Date.now() + STOP_WAIT_MS;
    while (Atomics.load(this.control, DONE) === 0 && Date.now() < deadline) Atomics.wait(this.control, DONE, 0, 5);
  }

  // --- internal ---

  private readonly knock: () => void;

  // Takes what came on a steady cadence; after a quiet spell, waits for the thread to say more came.
  private look(): void {
    this.quietLooks = 0;
    this.timer ??= setInterval(() => {
      if (this.drain()) this.quietLooks = 0;
      else if (++this.quietLooks >= QUIET_LOOKS && this.ring.sleep()) this.stopLooking();
    }, DRAIN_MS);
  }

  private stopLooking(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private drain(): boolean {
    const chunk = this.ring.take();
    if (chunk.length) this.onBytes(chunk);
    return chunk.length > 0;
  }
}

// the threads still reading: a thread asleep in its read would keep the process from ending, so every way out of
// uuldana (an exit, an error nothing caught) wakes and stops them
const running = new Set<OutputThread>();
process.on("exit", () => {
  for (const thread of running) thread.stop();
});

// The compiled thread beside this file; run from the sources (as the tests run them), the compiled one of the build.
// Looked for once: each run asks for it twice (whether to use a thread, then to start one).
let found: { file: URL | undefined } | undefined;
function workerFile(): URL | undefined {
  const places = [new URL("./output-worker.js", import.meta.url), new URL("../../dist/core/host/output-worker.js", import.meta.url)];
  found ??= { file: places.find((file) => existsSync(fileURLToPath(file))) };
  return found.file;
}
