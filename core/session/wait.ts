import { watchCooldowns } from "./cooldowns.js";

// Waiting, with no agent running, for the first resting entry to return: a timer to its return that also wakes at
// least once a minute (a laptop that slept would overshoot one long timer), and a watch on the cooldown table, which
// another uuldana (or "cooldowns clear") may change. Nothing polls faster than that.

export type WakeReason = "due" | "minute" | "changed" | "stopped";

// How long one timer runs at most before the wall clock is read again.
const RECHECK_MS = 60_000;

// Resolves at the first of: the instant is due, a minute passed, the cooldown table in the data dir changed, or stop
// was aborted.
export function waitForReturn(dataDir: string, until: Date, stop: AbortSignal, now: () => number = Date.now): Promise<WakeReason> {
  return new Promise((resolve) => {
    if (stop.aborted) return resolve("stopped");
    const left = until.getTime() - now();
    if (left <= 0) return resolve("due");
    const done = (reason: WakeReason): void => {
      clearTimeout(timer);
      unwatch();
      stop.removeEventListener("abort", onStop);
      resolve(reason);
    };
    const onStop = (): void => done("stopped");
    const timer = setTimeout(() => done(left <= RECHECK_MS ? "due" : "minute"), Math.min(left, RECHECK_MS));
    stop.addEventListener("abort", onStop);
    // a folder that cannot be watched: the minute's timer still reads the table again
    const unwatch = watchCooldowns(dataDir, () => done("changed"));
  });
}
