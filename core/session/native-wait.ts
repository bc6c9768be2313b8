import { compileLinePatterns } from "../registry/patterns.js";
import type { NativeWaitChoice } from "../config/config.js";
import type { Manifest } from "../registry/types.js";
import type { LimitEvent } from "./result.js";

// The agent's own offer at a limit, by the lines its screen shows: a wait for its reset, or a switch to another
// model; and what uuldana does about it (the entry's native_wait, else its manifest's default). An agent that
// switched itself is seen once, in the lines it draws, only when its manifest names such lines.
export class NativeWaitPolicy {
  readonly choice: NativeWaitChoice;
  private readonly waitsLine: (line: string) => boolean;
  private readonly switchesLine: (line: string) => boolean;
  private readonly endsLine: (line: string) => boolean;
  private readonly wrapUpLine: (line: string) => boolean;
  private switchSeen = false;
  private wrapUpSeen = false;

  constructor(private readonly manifest: Manifest, entryChoice: NativeWaitChoice | undefined) {
    this.waitsLine = compileLinePatterns(manifest.native_wait?.waits ?? []);
    this.switchesLine = compileLinePatterns(manifest.native_wait?.switches ?? []);
    this.endsLine = compileLinePatterns(manifest.native_wait?.ends ?? []);
    this.wrapUpLine = compileLinePatterns(manifest.wrap_up ?? []);
    this.choice = entryChoice ?? manifest.native_wait?.default ?? "failover";
  }

  // What the agent offers now, by its visible rows.
  offer(visible: readonly string[]): LimitEvent["offer"] {
    if (!this.manifest.native_wait) return undefined;
    const kind = visible.some(this.waitsLine) ? "wait" : visible.some(this.switchesLine) ? "switch" : undefined;
    return kind ? { kind, choice: this.choice } : undefined;
  }

  // The limit with the offer and, where the entry allows the agent's own wait, that as its action.
  offered(limit: LimitEvent, offer: LimitEvent["offer"]): LimitEvent {
    if (!offer) return limit;
    return { ...limit, offer, ...(offer.choice === "allow" && limit.action === "failover" ? { action: "left to the agent" as const } : {}) };
  }

  // The line in a batch the agent drew that says its own wait for the reset is over without it going on.
  waitEnded(lines: readonly string[]): string | undefined {
    return this.manifest.native_wait?.ends ? lines.find(this.endsLine)?.trim() : undefined;
  }

  // The line in a batch the agent drew that says it was told to wrap up near its limit, the first time one comes.
  wrapUp(lines: readonly string[]): string | undefined {
    if (this.wrapUpSeen || !this.manifest.wrap_up) return undefined;
    const line = lines.find(this.wrapUpLine)?.trim();
    if (line) this.wrapUpSeen = true;
    return line;
  }

  // The line in a batch the agent drew that says it switched its own model, the first time one comes.
  ownSwitch(lines: readonly string[]): string | undefined {
    if (this.switchSeen || !this.manifest.native_wait?.switches) return undefined;
    const line = lines.find(this.switchesLine)?.trim();
    if (line) this.switchSeen = true;
    return line;
  }
}
