import { parentPort, workerData } from "node:worker_threads";

import { describeExports, type ProviderAdapter } from "./adapter.js";
import { ANSWERED, ENDED, EXIT_CODE, STATE, type HookAnswer, type HookCall, type LoadAnswer, type WorkerSetup } from "./adapter-thread.js";

// The thread a pack's or a drop-in's adapter runs in (adapter-thread.ts starts it and holds the other end). It imports
// the adapter and says what it exports (on the thread's own channel, read as an event), then answers one hook call at
// a time on a port the main thread only ever reads synchronously: the answer goes on the port, and the shared state
// word says it is there, waking the main thread that waits on it. Whatever the adapter does here (loop, never
// settle, exit, throw) stops this thread at worst; the main thread's deadlines decide what happens then.

const { url, state, port } = workerData as WorkerSetup;
let adapter: ProviderAdapter | undefined;
// where a throw outside any hook is told: as the load's answer until the adapter has loaded, then beside the hooks' answers
let told: { postMessage(message: unknown): void } = parentPort!;

// the adapter's output is dropped here: nothing reads the thread's streams
for (const stream of [process.stdout, process.stderr]) stream.write = () => true;

// process.exit, or a throw no hook caught, ends this thread: say so at once to a main thread waiting on a call.
process.on("exit", (code) => {
  Atomics.store(state, EXIT_CODE, code);
  Atomics.store(state, STATE, ENDED);
  Atomics.notify(state, STATE);
});
process.on("uncaughtException", (error) => {
  told.postMessage({ crashed: oneLine(error) } satisfies LoadAnswer);
  process.exit(1);
});
// the listener also keeps the thread alive while an import awaits something that never settles
port.on("message", (call: HookCall) => answer(call));

try {
  const loaded = (await import(url)) as { default?: unknown };
  const shape = describeExports(loaded);
  adapter = loaded.default as ProviderAdapter;
  told = port;
  parentPort!.postMessage({ shape } satisfies LoadAnswer);
} catch (error) {
  post(parentPort!, { failed: error }, { failed: { message: oneLine(error) } });
}

function answer(call: HookCall): void {
  const started = performance.now();
  let result: Omit<HookAnswer, "durationMs">;
  try {
    const value: unknown = (adapter as Record<string, (argument: unknown) => unknown>)[call.hook]!.call(adapter, call.argument);
    if (typeof (value as { then?: unknown } | null)?.then === "function") {
      (value as Promise<unknown>).then(undefined, () => undefined);
      result = { promise: true };
    } else result = typeof value === "function" ? { fn: true } : { value };
  } catch (error) {
    result = { threw: oneLine(error) };
  }
  const durationMs = performance.now() - started;
  post(port, { ...result, durationMs }, { unsendable: "value" in result ? oneLine(Object.prototype.toString.call(result.value)) : "", durationMs });
  Atomics.store(state, STATE, ANSWERED);
  Atomics.notify(state, STATE);
}

// Posts a message, or the fallback when the message cannot be copied to the other thread (a function inside it).
function post(to: { postMessage(message: unknown): void }, message: unknown, fallback: unknown): void {
  try {
    to.postMessage(message);
  } catch {
    to.postMessage(fallback);
  }
}

function oneLine(error: unknown): string {
  try {
    return (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
  } catch {
    return "an error that cannot be shown";
  }
}
