import type { NativeQuota } from "../registry/adapter.js";
import { lowestWindow, nativeLimit, rotation, type FailoverFacts } from "./limit-events.js";
import type { LimitEvent } from "./result.js";

// The agent's own quota numbers, read whenever the files it writes them to change: each reading kept; one that says
// the allowance is gone proposes a stop once the agent has had time to say so itself (the two are then one event);
// one at or below the rotation threshold proposes moving on at the next turn boundary, once.

export interface QuotaPolicyOptions {
  // the adapter's reading now, if any
  read: () => NativeQuota | undefined;
  // a new reading: kept in the data dir, journaled when it changed
  keep: (reading: NativeQuota) => void;
  // rotate_at_percent_left for this entry, and whether another entry can take over
  threshold: number | undefined;
  facts: FailoverFacts;
  cooldownMinutes: number;
  // how long a gone allowance waits for the printed message before it stops the run on its own
  graceMs: number;
  // numbers after an answer: the agent handed the conversation has taken it
  answered: () => void;
  // the event proposed, with what it means; true when the run took it
  propose: (event: "native-limit" | "native-low", limit: LimitEvent) => boolean;
}

export class QuotaPolicy {
  private last: NativeQuota | undefined;
  private timer: NodeJS.Timeout | undefined;
  private rotating = false;

  constructor(private readonly options: QuotaPolicyOptions) {}

  // The latest reading that says the allowance is gone, read now when none did before.
  exhausted(): NonNullable<NativeQuota["exhausted"]> | undefined {
    return (this.last?.exhausted ? this.last : this.readNow())?.exhausted;
  }

  // The files changed: a new reading, and what it proposes.
  changed(): void {
    const reading = this.readNow();
    if (!reading) return;
    this.options.answered();
    const { facts, cooldownMinutes } = this.options;
    if (reading.exhausted) {
      const gone = reading.exhausted;
      this.timer ??= setTimeout(() => void this.options.propose("native-limit", nativeLimit(gone, cooldownMinutes, facts)), this.options.graceMs);
      return;
    }
    this.rotateIfLow(reading);
  }

  // A reading of the same account taken on another machine (the shared store, shared-rests.ts): a nearly spent
  // window moves this run on too, before it walks into the wall.
  heard(reading: NativeQuota): void {
    this.rotateIfLow(reading);
  }

  // A window at or below the threshold proposes moving on at the next turn boundary, once.
  private rotateIfLow(reading: NativeQuota): void {
    const { facts, cooldownMinutes, threshold } = this.options;
    const low = lowestWindow(reading);
    if (threshold === undefined || !facts.failover || this.rotating || !low || low.percentLeft > threshold) return;
    this.rotating = this.options.propose("native-low", rotation(low, threshold, cooldownMinutes));
  }

  close(): void {
    clearTimeout(this.timer);
  }

  private readNow(): NativeQuota | undefined {
    const reading = this.options.read();
    if (reading) {
      this.last = reading;
      this.options.keep(reading);
    }
    return reading;
  }
}
