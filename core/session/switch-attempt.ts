import { typeKeys } from "../host/keys.js";
import type { Verdict } from "../reader/reader.js";
import type { Manifest } from "../registry/types.js";
import { mentions } from "./model-switch.js";
import { promptShown } from "./receiver.js";

// One try at switching model inside a running agent: the manifest's switch keys, the new model named on its screen,
// the agent asked to go on (unless it resends the refused request itself), and what it drew then not a limit again.
// Everything it waits for is bounded; between the agent's drawing it only looks, never types.

// What the try needs of the run.
export interface SwitchingRun {
  visible(): string[];
  write(data: string): void;
  busy(visible: readonly string[]): boolean;
  classify(text: string): Verdict;
  // the run has ended
  over(): boolean;
}

export interface SwitchTiming {
  // how long each step may take (receiver_seconds)
  seconds: number;
  // how long the screen must read the same for the agent to count as done (quiet_seconds)
  quietMs: number;
}

export class SwitchAttempt {
  private readonly waiters = new Set<() => void>();
  // when the agent last drew anything
  private drawnAt = 0;

  constructor(
    private readonly run: SwitchingRun,
    private readonly manifest: Manifest,
    private readonly timing: SwitchTiming,
  ) {}

  // The agent drew something.
  drawn(): void {
    this.drawnAt = Date.now();
    for (const waiter of [...this.waiters]) waiter();
  }

  // Undefined when the switch to the model took, else why not.
  async to(model: string): Promise<string | undefined> {
    const { run, timing } = this;
    const seconds = timing.seconds;
    const before = new Set(run.visible().map((line) => line.trim()));
    const keys = (this.manifest.models?.switch_keys ?? []).map((key) => key.replaceAll("{model}", model));
    await typeKeys(run, keys, run.over);
    const switched = Date.now();
    // the agent's own word of the new model: a new line naming it that is not the echo of what uuldana typed
    const typed = keys.filter((key) => !/^\{[^{}]+\}$/.test(key) && mentions(key, model)).map((key) => key.trim());
    const named = (): boolean => run.visible().some((line) => line.trim() !== "" && !before.has(line.trim()) && mentions(line, model) && !typed.some((text) => line.includes(text)));
    if (!(await this.until(named, seconds * 1000))) return `its screen did not name ${model} within ${seconds} s of the switch keys`;
    // the refused request again: the CLI resends it by itself, or uuldana asks it to go on in one line (with no word
    // of a limit in it, so its echo is not read as one)
    const asked = this.manifest.models?.retries ? undefined : continueLine(model);
    // a pause before Enter: an agent busy drawing takes text and Enter typed at once for a paste
    if (asked) await typeKeys(run, [asked, "{pause}"], run.over);
    // what it draws from here on is its answer (an agent on loopback answers before the next key could be typed); a
    // CLI that resends the refused request itself answers right after the switch keys
    const since = asked ? Date.now() : switched;
    if (asked) await typeKeys(run, ["{enter}"], run.over);
    if (!(await this.settled(since, timing.quietMs, seconds * 1000))) return `it drew nothing within ${seconds} s on ${model}`;
    const visible = run.visible();
    if (run.busy(visible)) return undefined;
    // what it drew below its echo of that line (or below the line naming the new model): refused again, or an answer
    const anchor = visible.findLastIndex((line) => (asked ? promptShown(asked, line) : mentions(line, model)));
    const after = visible.slice(anchor === -1 ? -12 : anchor + 1).filter((line) => line.trim() !== "");
    const verdict = run.classify(after.join("\n"));
    if (verdict.stop) return `it was refused again on ${model}: ${(verdict.span?.text ?? after.join(" ")).replace(/\s+/g, " ").slice(0, 160)}`;
    return undefined;
  }

  // --- internal ---

  // Resolves true once the condition holds (looked at as the agent draws), false after ms or when the run ends.
  private until(condition: () => boolean, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      if (condition()) return resolve(true);
      const done = (result: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(result);
      };
      const check = (): void => {
        if (this.run.over()) done(false);
        else if (condition()) done(true);
      };
      const timer = setTimeout(() => done(condition()), ms);
      this.waiters.add(check);
    });
  }

  // Resolves true once the agent drew something since the instant and its screen then read the same for quietMs
  // without showing that it works (an agent that redraws the same text counts as done), or when ms pass after it
  // drew; false when it drew nothing within ms. Looked at every quietMs, only while a switch is checked.
  private settled(since: number, quietMs: number, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const deadline = Date.now() + ms;
      let last = this.run.visible().join("\n");
      const look = (): void => {
        const visible = this.run.visible();
        const now = visible.join("\n");
        const drew = this.drawnAt >= since;
        if (this.run.over()) return resolve(false);
        if (drew && now === last && !this.run.busy(visible)) return resolve(true);
        if (Date.now() >= deadline) return resolve(drew);
        last = now;
        setTimeout(look, quietMs);
      };
      setTimeout(look, quietMs);
    });
  }
}

// What uuldana types after switching model in place, for the agent to take up the refused request again.
function continueLine(model: string): string {
  return `You now run on ${model}. Please continue with the last request where you left off.`;
}
