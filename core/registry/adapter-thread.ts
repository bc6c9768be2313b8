import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";

import { adapterFile, adapterLoadError, checkExports, importError, type ExportsShape, type HookName } from "./adapter.js";
import type { ManifestRecord } from "./types.js";

// An adapter that is not uuldana's own, run in a worker thread of its own so that no code of it can stop uuldana's.
// Hook calls stay synchronous for the reader: the call is posted to the thread and the main thread waits on a shared
// word (Atomics.wait) for at most the hook's budget. A call not back by then is left behind and answers nothing; the
// thread has GRACE_MS more to finish it (a slow hook, turned off alone) before it is ended (a hook that never returns,
// and the whole adapter is off). An import gets LOAD_DEADLINE_MS. process.exit, or a throw outside any hook, ends
// only the thread, and the adapter with it.

// How long an adapter may take to load (its import, top-level awaits included).
export const LOAD_DEADLINE_MS = 3000;

// How long a call left behind at its budget may still take before the thread is ended.
export const GRACE_MS = 1000;

// What one call came to. "late": not back within the budget (left behind); "busy": an earlier call is still running,
// so this one was not made; "ended": the thread is gone.
export type ThreadAnswer = { value: unknown } | { threw: string } | { wrong: string } | { late: true } | { busy: true } | { ended: true };

// What happened to the adapter after a call was left behind, or when its thread ended; told once each.
export type ThreadEvent =
  | { kind: "slow"; hook: HookName; durationMs: number; budgetMs: number }
  | { kind: "hung"; hook: HookName; waitedMs: number; budgetMs: number }
  | { kind: "exited"; hook: HookName | undefined; what: string };

export interface AdapterThread {
  // the hooks the adapter gives
  readonly hooks: readonly HookName[];
  call(hook: HookName, argument: unknown, budgetMs: number): ThreadAnswer;
  // tells now what a call left behind came to: its late answer, or, still running, a hook that did not return
  settle(): void;
  close(): void;
}

// Starts the thread and imports the adapter there: E_ADAPTER_LOAD when it will not load, throws, exits or is still
// loading at the deadline; E_ADAPTER_INVALID when what it exports is not an object of hooks.
export async function openAdapterThread(record: ManifestRecord, events: (event: ThreadEvent) => void): Promise<AdapterThread> {
  const state = new Int32Array(new SharedArrayBuffer(8));
  const { port1: port, port2 } = new MessageChannel();
  const setup: WorkerSetup = { url: pathToFileURL(adapterFile(record)!).href, state, port: port2 };
  // the adapter's own output never reaches the terminal, where it would land in the middle of the agent's screen: the
  // thread's streams are its own (never read, which would keep uuldana running), and writes to them are dropped there
  const worker = new Worker(workerFile(), { workerData: setup, transferList: [port2], stdout: true, stderr: true, execArgv: threadArgs() });
  worker.unref();
  let failed: unknown;
  worker.on("error", (error) => (failed ??= error));
  const loaded = await loadAnswer(worker, state, () => failed);
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    port.close();
    void worker.terminate();
  };
  if (!("shape" in loaded)) {
    end();
    throw "failed" in loaded ? importError(record, loaded.failed) : adapterLoadError(record, loaded.what);
  }
  try {
    const thread = new Thread(checkExports(record, loaded.shape), port, state, end, events);
    // an end between calls is told as it happens
    worker.once("exit", () => thread.look());
    return thread;
  } catch (error) {
    end();
    throw error;
  }
}

// The shared state word's places and values, as both threads read them.
export const STATE = 0;
export const EXIT_CODE = 1;
export const IDLE = 0;
export const CALLING = 1;
export const ANSWERED = 2;
export const ENDED = 3;

// What the main thread gives the adapter's thread (adapter-worker.ts).
export interface WorkerSetup {
  url: string;
  state: Int32Array;
  port: MessagePort;
}

// One call, and its answer: a value to check, or what was thrown, with how long the hook took here.
export interface HookCall {
  hook: string;
  argument: unknown;
}
export type HookAnswer = ({ value: unknown } | { threw: string } | { unsendable: string } | { promise: true } | { fn: true }) & { durationMs: number };

// What the thread says once the import is over: what the module exports, or what the import threw.
export type LoadAnswer = { shape: ExportsShape } | { failed: unknown } | { crashed: string };

// --- internal ---

class Thread implements AdapterThread {
  // the call left behind at its budget, while the thread may still finish it
  private behind: { hook: HookName; timer: NodeJS.Timeout; budgetMs: number; started: number } | undefined;
  private ended = false;

  constructor(
    readonly hooks: readonly HookName[],
    private readonly port: MessagePort,
    private readonly state: Int32Array,
    private readonly end: () => void,
    private readonly events: (event: ThreadEvent) => void,
  ) {}

  call(hook: HookName, argument: unknown, budgetMs: number): ThreadAnswer {
    this.look();
    if (this.ended) return { ended: true };
    if (this.behind) return { busy: true };
    Atomics.store(this.state, STATE, CALLING);
    const started = performance.now();
    this.port.postMessage({ hook, argument } satisfies HookCall);
    Atomics.wait(this.state, STATE, CALLING, budgetMs);
    const now = Atomics.load(this.state, STATE);
    if (now === ENDED) return this.gone(hook), { ended: true };
    if (now === CALLING) {
      this.behind = { hook, budgetMs, started, timer: setTimeout(() => this.look(true), GRACE_MS).unref() };
      return { late: true };
    }
    Atomics.store(this.state, STATE, IDLE);
    return fromWire(receiveMessageOnPort(this.port)?.message as HookAnswer | undefined);
  }

  settle(): void {
    this.look(true);
  }

  close(): void {
    this.look(true);
    this.finish();
  }

  private finish(): void {
    if (this.behind) clearTimeout(this.behind.timer);
    this.behind = undefined;
    this.ended = true;
    this.end();
  }

  // A call left behind: its late answer (the hook was slow), the thread's end, or, when the grace is over (or the run
  // is), the end of a thread that is still in it; with no call left behind, an end of the thread between calls.
  look(graceOver = false): void {
    const behind = this.behind;
    const now = Atomics.load(this.state, STATE);
    if (!behind && !this.ended && now === ENDED) return this.gone(undefined);
    if (!behind || this.ended) return;
    if (now === CALLING && !graceOver) return;
    clearTimeout(behind.timer);
    this.behind = undefined;
    if (now === ENDED) return this.gone(behind.hook);
    if (now === CALLING) {
      this.finish();
      return this.events({ kind: "hung", hook: behind.hook, waitedMs: Math.min(Math.round(performance.now() - behind.started), behind.budgetMs + GRACE_MS), budgetMs: behind.budgetMs });
    }
    Atomics.store(this.state, STATE, IDLE);
    const late = receiveMessageOnPort(this.port)?.message as HookAnswer | undefined;
    this.events({ kind: "slow", hook: behind.hook, durationMs: Math.round(late?.durationMs ?? behind.budgetMs), budgetMs: behind.budgetMs });
  }

  private gone(hook: HookName | undefined): void {
    const said = receiveMessageOnPort(this.port)?.message as { crashed?: string } | undefined;
    const code = Atomics.load(this.state, EXIT_CODE);
    this.finish();
    this.events({ kind: "exited", hook, what: said?.crashed !== undefined ? `threw outside any hook (${said.crashed})` : `called process.exit(${code})` });
  }
}

// What the thread said of its import, or what it did instead: ended, or still loading at the deadline.
// The answer comes on the thread's own channel, as an event: the hooks' port is only ever read synchronously, so that
// no answer on it is taken by an event listener.
async function loadAnswer(worker: Worker, state: Int32Array, failed: () => unknown): Promise<{ shape: ExportsShape } | { failed: unknown } | { what: string }> {
  return new Promise((settle) => {
    const timer = setTimeout(() => settle({ what: `it was still loading after ${LOAD_DEADLINE_MS / 1000} s (a loop, or a top-level await that never settles)` }), LOAD_DEADLINE_MS);
    worker.once("message", (message: LoadAnswer) => {
      clearTimeout(timer);
      if ("crashed" in message) return settle({ what: `loading it threw an error (${message.crashed})` });
      settle("failed" in message ? { failed: message.failed instanceof Error ? message.failed : new Error(String((message.failed as { message?: unknown })?.message)) } : message);
    });
    worker.once("exit", (code) => {
      clearTimeout(timer);
      const error = failed();
      if (Atomics.load(state, STATE) === ENDED) return settle({ what: `its top level called process.exit(${code})` });
      settle({ what: `its thread ended while loading${error instanceof Error ? ` (${error.message.split("\n")[0]})` : ""}` });
    });
  });
}

// A hook's answer as it crossed: the value itself, or stand-ins for what cannot cross (a promise, a function).
function fromWire(answer: HookAnswer | undefined): ThreadAnswer {
  if (!answer) return { wrong: "nothing" };
  if ("threw" in answer) return { threw: answer.threw };
  // stand-ins the checks name as they name the real thing
  if ("promise" in answer) return { value: { then: () => undefined } };
  if ("fn" in answer) return { value: () => undefined };
  if ("unsendable" in answer) return { wrong: `${answer.unsendable}, which cannot be copied out of its thread` };
  return { value: answer.value };
}

// The main thread's Node options that decide how a module loads (loaders, import and require hooks, export conditions,
// experimental module features), so that the adapter loads as it would in uuldana's thread. Nothing else crosses: a
// Worker refuses the options that belong to a whole process, and a test runner may start Node with many of those.
const LOADING_WITH_VALUE = ["--import", "--require", "-r", "--loader", "--experimental-loader", "--conditions", "-C"];

function threadArgs(): string[] {
  const args: string[] = [];
  for (let i = 0; i < process.execArgv.length; i++) {
    const arg = process.execArgv[i]!;
    const value = process.execArgv[i + 1];
    if (LOADING_WITH_VALUE.includes(arg) && value !== undefined) {
      args.push(arg, value);
      i++;
    } else if (/^--(import|require|loader|experimental-loader|conditions)=/.test(arg)) args.push(arg);
    else if (/^--(experimental|no-experimental)-[a-z-]+$/.test(arg) && !arg.includes("loader")) args.push(arg);
  }
  return args;
}

// The compiled worker beside this file; run from the sources (as the tests run them), the compiled one of the build.
function workerFile(): URL {
  const beside = new URL("./adapter-worker.js", import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  return new URL("../../dist/core/registry/adapter-worker.js", import.meta.url);
}
