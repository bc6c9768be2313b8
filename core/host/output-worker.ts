// The output thread (started by output-thread.ts): reads the agent's terminal in large reads, writes what it read
// to the user's terminal (titles rewritten, held back while uuldana's prompt covers the screen), and copies it into
// the shared ring the main thread reads on its own cadence. The terminal is blocking: the thread sleeps in its read
// until the agent writes; the main thread wakes it with a knock (a NUL byte it writes where the agent writes, which
// the thread drops) when it has something to say: the prompt has closed, the run stops, the agent is gone.
import { readSync, writeSync } from "node:fs";
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from "node:worker_threads";

import { RingWriter, type RingMemory } from "../terminal/shared-ring.js";
import { TitleFilter } from "./title.js";
import { DONE, GONE, HELD_LIMIT, HOLD, KNOCKS, STOP, WORDS, WRITING, type OutputThreadSetup, type ToOutputThread } from "./output-thread-protocol.js";

const READ_BYTES = 256 * 1024;
// a read made while the main thread writes to the agent finds the terminal non-blocking for that moment: it is
// tried again this much later
const RETRY_MS = 0.1;

const setup = workerData as OutputThreadSetup & { ring: RingMemory; port: MessagePort };
const control = new Int32Array(setup.control);
const ring = new RingWriter(setup.ring);
let prefix = setup.titlePrefix;
let reportedTitle = "";
const titles = new TitleFilter((agentTitle) => `${prefix}${agentTitle ? ` · ${agentTitle}` : ""}`);
let held: Buffer[] | undefined;
let heldBytes = 0;
let writable = true;

// knocks the main thread made whose NUL bytes are still to be found among those read
let knocks = 0;

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

// Writes what was held and then data, unless uuldana's prompt covers the screen: then data is held too.
function pass(data: Buffer): void {
  Atomics.store(control, WRITING, 1);
  if (Atomics.load(control, HOLD) === 1) {
    Atomics.store(control, WRITING, 0);
    Atomics.notify(control, WRITING);
    hold(data);
    return;
  }
  if (held) {
    const pending = Buffer.concat(held);
    held = undefined;
    heldBytes = 0;
    show(pending);
  }
  if (data.length) show(data);
  Atomics.store(control, WRITING, 0);
  Atomics.notify(control, WRITING);
}

function hold(data: Buffer): void {
  held ??= [];
  if (data.length && heldBytes + data.length <= HELD_LIMIT) {
    held.push(data);
    heldBytes += data.length;
  }
}

// Words from the main thread (uuldana's part of the title), and what was held once the prompt has closed.
function readControl(): void {
  if (Atomics.exchange(control, WORDS, 0) === 1) {
    for (let message = receiveMessageOnPort(setup.port); message; message = receiveMessageOnPort(setup.port)) {
      const word = message.message as ToOutputThread;
      if (word.titlePrefix !== undefined) prefix = word.titlePrefix;
    }
  }
  if (held && Atomics.load(control, HOLD) === 0) pass(Buffer.alloc(0));
}

function take(chunk: Buffer): void {
  pass(titles.filter(chunk));
  if (titles.agentTitle !== reportedTitle) {
    reportedTitle = titles.agentTitle;
    parentPort!.postMessage({ agentTitle: reportedTitle });
  }
  if (ring.put(chunk, stopped)) parentPort!.postMessage({ wake: true });
}

// The bytes read less the NULs of knocks (a NUL the agent wrote itself may be taken for one: terminals ignore it).
function withoutKnocks(read: Buffer): Buffer {
  knocks += Atomics.exchange(control, KNOCKS, 0);
  if (knocks === 0 || !read.includes(0)) return read;
  const parts: Buffer[] = [];
  let from = 0;
  for (let at = read.indexOf(0); at >= 0 && knocks > 0; at = read.indexOf(0, from)) {
    parts.push(read.subarray(from, at));
    from = at + 1;
    knocks--;
  }
  parts.push(read.subarray(from));
  return Buffer.concat(parts);
}

function run(): void {
  const buffer = Buffer.allocUnsafe(READ_BYTES);
  while (!stopped()) {
    let count: number;
    try {
      count = readSync(setup.fd, buffer, 0, READ_BYTES, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") return;
      Atomics.wait(control, STOP, 0, RETRY_MS);
      continue;
    }
    // end of file, or EIO above: every side of the terminal is closed
    if (count === 0) return;
    const read = buffer.subarray(0, count);
    // a copy: the title filter may keep a part of it, and the read buffer is used again
    const data = Buffer.from(withoutKnocks(read));
    if (data.length) take(data);
    readControl();
    // the agent is gone and a knock made after it ended this read: all it wrote came before
    if (Atomics.load(control, GONE) === 1 && read[count - 1] === 0 && data.length < count) return;
  }
}

run();
titles.end();
if (!stopped() && held && Atomics.load(control, HOLD) === 0) pass(Buffer.alloc(0));
Atomics.store(control, DONE, 1);
Atomics.notify(control, DONE);
// still held when the output ended (uuldana's prompt is open): the main thread writes it once the prompt closes;
// unless the run was stopped, whose terminal is given back as it was
if (held?.length && !stopped()) parentPort!.postMessage({ held: Buffer.concat(held) });
parentPort!.postMessage({ end: true });
