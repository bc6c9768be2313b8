import { Worker } from "node:worker_threads";
import { join } from "node:path";

import { packageRoot } from "../base/paths.js";
import type { DrawnBatch, ScreenOptions } from "./screen.js";
import { NO_MODES, type TerminalModes } from "./tty.js";

export type ScreenRequest =
  | { type: "write"; data: Uint8Array }
  | { type: "resize"; cols: number; rows: number }
  | { type: "replies" }
  | { type: "read"; id: number; changed: boolean; conversation: boolean };

export type ScreenUpdate =
  | { type: "progress"; parsed: number; modes: TerminalModes; dropped: number }
  | { type: "reply"; data: string }
  | ({ type: "drawn" } & DrawnBatch)
  | {
      type: "read";
      id: number;
      parsed: number;
      modes: TerminalModes;
      dropped: number;
      visible: string[];
      changed: string[];
      conversation: string;
    };

export interface ScreenSnapshot {
  visible: string[];
  changed: string[];
  conversation: string;
}

const DEFAULT_MAX_PENDING = 10_000_000;
const BATCH_DELAY_MS = 8;
const BATCH_BYTES = 256 * 1024;

// The screen model as the host sees it: it lives on its own thread, so feeding it costs the pass-through a copy
// and a message; reading it is asynchronous. What it cannot keep up with is left out and counted, never waited for.
export class ScreenProxy {
  private readonly worker: Worker;
  private readonly maxPending: number;
  private posted = 0;
  private parsed = 0;
  private nextId = 1;
  private readonly waiting = new Map<number, (snapshot: ScreenSnapshot) => void>();
  private replyListener: ((data: string) => void) | undefined;
  private drawnListener: ((drawn: DrawnBatch) => void) | undefined;
  private size: { cols: number; rows: number };
  // the latest modes the model reported: close enough for drawing, exact after read()
  modes: TerminalModes = NO_MODES;
  droppedChars = 0;
  droppedChunks = 0;
  private modelDropped = 0;
  private disposed = false;
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(options: ScreenOptions) {
    this.size = { cols: options.cols, rows: options.rows };
    this.maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
    this.worker = new Worker(join(packageRoot(), "dist", "core", "terminal", "screen-worker.js"), {
      workerData: { ...options, maxPending: this.maxPending },
    });
    // only a read waiting for its answer keeps uuldana alive, never the idle model (unref() comes after the
    // listener: adding a "message" listener refs the worker again)
    this.worker.on("message", (update: ScreenUpdate) => this.receive(update));
    this.worker.unref();
  }

  // Queues output for the model; queued chunks go over together a few milliseconds later, after the pass-through
  // has written them, so a keystroke's echo never waits for the model.
  write(chunk: Buffer): void {
    if (this.disposed) return;
    if (this.posted + this.queuedBytes - this.parsed + chunk.length > this.maxPending) {
      this.droppedChars += chunk.length;
      this.droppedChunks++;
      return;
    }
    this.queue.push(chunk);
    this.queuedBytes += chunk.length;
    if (this.queuedBytes >= BATCH_BYTES) this.flush();
    else this.flushTimer ??= setTimeout(() => this.flush(), BATCH_DELAY_MS);
  }

  resize(cols: number, rows: number): void {
    this.flush();
    this.size = { cols, rows };
    this.post({ type: "resize", cols, rows });
  }

  get cols(): number {
    return this.size.cols;
  }

  get rows(): number {
    return this.size.rows;
  }

  // Characters of output the model skipped because it fell too far behind.
  get skipped(): number {
    return this.droppedChars + this.modelDropped;
  }

  // Lines the agent drew and where they changed, as the model parses them (see Screen.takeDrawn).
  onDrawn(listener: (drawn: DrawnBatch) => void): void {
    this.drawnListener = listener;
  }

  onReply(listener: (data: string) => void): () => void {
    this.replyListener = listener;
    this.post({ type: "replies" });
    return () => (this.replyListener = undefined);
  }

  // Everything written so far, parsed: the visible screen, the rows changed since the last read that asked for
  // them, and (when asked) the conversation.
  read(options: { changed?: boolean; conversation?: boolean } = {}): Promise<ScreenSnapshot> {
    if (this.disposed) return Promise.resolve({ visible: [], changed: [], conversation: "" });
    this.flush();
    const id = this.nextId++;
    if (this.waiting.size === 0) this.worker.ref();
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.post({ type: "read", id, changed: options.changed === true, conversation: options.conversation === true });
    });
  }

  // Ends the model's thread; reads still waiting, and any made later, get an empty snapshot.
  async dispose(): Promise<void> {
    this.disposed = true;
    clearTimeout(this.flushTimer);
    for (const resolve of this.waiting.values()) resolve({ visible: [], changed: [], conversation: "" });
    this.waiting.clear();
    await this.worker.terminate();
  }

  // --- internal ---

  private flush(): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.queue.length === 0) return;
    const data = this.queue.length === 1 ? this.queue[0]! : Buffer.concat(this.queue);
    this.posted += this.queuedBytes;
    this.queue = [];
    this.queuedBytes = 0;
    this.post({ type: "write", data });
  }

  private post(request: ScreenRequest): void {
    this.worker.postMessage(request);
  }

  private receive(update: ScreenUpdate): void {
    if (update.type === "reply") {
      this.replyListener?.(update.data);
      return;
    }
    if (update.type === "drawn") {
      this.drawnListener?.({ lines: update.lines, grew: update.grew, redrawn: update.redrawn });
      return;
    }
    this.parsed = update.parsed;
    this.modes = update.modes;
    this.modelDropped = update.dropped;
    if (update.type === "read") {
      const resolve = this.waiting.get(update.id);
      this.waiting.delete(update.id);
      if (this.waiting.size === 0) this.worker.unref();
      resolve?.({ visible: update.visible, changed: update.changed, conversation: update.conversation });
    }
  }
}
