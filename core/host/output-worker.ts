// The output thread (started by output-thread.ts): reads the agent's terminal in large reads, writes what it read
// to the user's terminal (titles rewritten, held back while uuldana's prompt covers the screen), and copies it into
// the shared ring the main thread reads on its own cadence. The terminal is non-blocking: when it has nothing, the
// thread waits a moment and looks again, briefly at first (an echo of a key is on its way), longer as the quiet goes
// on; a key written to the agent, a word from the main thread or the agent's exit wakes it at once.
import { readSync, writeSync } from "node:fs";
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from "node:worker_threads";

import { RingWriter, type RingMemory } from "../terminal/shared-ring.js";
import { TitleFilter } from "./title.js";
import { DONE, GONE, HELD, HOLD, STOP, WAKE, type OutputThreadSetup, type ToOutputThread } from "./output-thread-protocol.js";

const READ_BYTES = 256 * 1024;
// the most bytes held while uuldana's prompt covers the screen; what comes beyond is dropped (as on the main thread)
const HELD_LIMIT = 8 * 1024 * 1024;
// looking again: every STEP_MS for FAST_MS after the last output or wake, then twice as long each time up to SLOW_MS;
// after IDLE_AFTER_MS of quiet, every IDLE_MS (a look costs some 30 µs of CPU: an idle agent costs almost nothing)
const STEP_MS = 0.05;
const FAST_MS = 3;
const SLOW_MS = 4;
const IDLE_AFTER_MS = 1000;
const IDLE_MS = 50;

const setup = workerData as OutputThreadSetup & { ring: RingMemory; port: MessagePort };
const control = new Int32Array(setup.control);
const ring = new RingWriter(setup.ring);
let prefix = setup.titlePrefix;
let reportedTitle = "";
const titles = new TitleFilter((agentTitle) => `${prefix}${agentTitle ? ` · ${agentTitle}` : ""}`);
let held: Buffer[] | undefined;
let heldBytes = 0;
let writable = true;

const stopped = (): boolean => Atomics.load(control, STOP) === 1;

// Writes all of data to the user's terminal; a terminal that cannot take more yet is waited for, one that is gone
// is written to no more.
function show(data: Buffer): void {
  let at = 0;
  while (writable && at < data.length && !stopped()) {
    try {
      at += writeSync(setup.out, data, at);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EAGAIN") Atomics.wait(control, STOP, 0, 1);
      else writable = false;
    }
  }
}

function pass(data: Buffer): void {
  if (Atomics.load(control, HOLD) === 1) {
    if (!held) {
      held = [];
      Atomics.store(control, HELD, 1);
      Atomics.notify(control, HELD);
    }
    if (heldBytes + data.length <= HELD_LIMIT) {
      held.push(Buffer.from(data));
      heldBytes += data.length;
    }
    return;
  }
  releaseHeld();
  if (data.length) show(data);
}

// The prompt has closed: what was held is written first.
function releaseHeld(): void {
  if (!held || Atomics.load(control, HOLD) === 1) return;
  const pending = Buffer.concat(held);
  held = undefined;
  heldBytes = 0;
  Atomics.store(control, HELD, 0);
  if (pending.length) show(pending);
}

// Words from the main thread: uuldana's part of the title, and holding the output.
function readControl(): void {
  for (let message = receiveMessageOnPort(setup.port); message; message = receiveMessageOnPort(setup.port)) {
    const word = message.message as ToOutputThread;
    if (word.titlePrefix !== undefined) prefix = word.titlePrefix;
  }
  if (Atomics.load(control, HOLD) === 1 && !held) pass(Buffer.alloc(0));
  else releaseHeld();
}

function take(chunk: Buffer): void {
  pass(titles.filter(chunk));
  if (titles.agentTitle !== reportedTitle) {
    reportedTitle = titles.agentTitle;
    parentPort!.postMessage({ agentTitle: reportedTitle });
  }
  if (ring.put(chunk, stopped)) parentPort!.postMessage({ wake: true });
}

function run(): void {
  const buffer = Buffer.allocUnsafe(READ_BYTES);
  let quietSince = performance.now();
  let wait = STEP_MS;
  while (!stopped()) {
    if (Atomics.exchange(control, WAKE, 0) === 1) {
      readControl();
      quietSince = performance.now();
      wait = STEP_MS;
    }
    let count: number;
    try {
      count = readSync(setup.fd, buffer, 0, READ_BYTES, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") return;
      // nothing there: once the agent is gone, its output has ended
      if (Atomics.load(control, GONE) === 1) return;
      Atomics.wait(control, WAKE, 0, wait);
      const quiet = performance.now() - quietSince;
      if (quiet > IDLE_AFTER_MS) wait = IDLE_MS;
      else if (quiet > FAST_MS) wait = Math.min(wait * 2, SLOW_MS);
      continue;
    }
    // end of file, or EIO above: every side of the terminal is closed
    if (count === 0) return;
    // a copy: the title filter may keep a part of it, and the read buffer is used again
    take(Buffer.from(buffer.subarray(0, count)));
    quietSince = performance.now();
    wait = STEP_MS;
  }
}

run();
titles.end();
if (!stopped()) releaseHeld();
Atomics.store(control, DONE, 1);
Atomics.notify(control, DONE);
// still held when the output ended (uuldana's prompt is open): the main thread writes it once the prompt closes
if (held?.length) parentPort!.postMessage({ held: Buffer.concat(held) });
parentPort!.postMessage({ end: true });
