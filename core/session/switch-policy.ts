import type { Manifest } from "../registry/types.js";
import { exhaustedModel, switchTarget } from "./model-switch.js";
import type { LimitEvent } from "./result.js";
import { SwitchAttempt, type SwitchingRun, type SwitchTiming } from "./switch-attempt.js";

// In-place model switch (the entry's switch_models): at a per-model limit whose model is known and another one is
// left, propose switching to it; the try itself is a SwitchAttempt. The model the agent runs on, and the ones that
// rest on their own, are kept here.
export class SwitchPolicy {
  private attempt: SwitchAttempt | undefined;

  constructor(
    private readonly manifest: Manifest,
    private readonly enabled: boolean,
    // the models that rest on their own (the entry's, and each this run left)
    readonly resting: Set<string>,
    // the model the agent runs on, when known: the one its arguments chose, then each it was switched to
    public current: string | undefined,
  ) {}

  // The model that ran out and the one to switch to, when a switch applies to this limit.
  proposal(limit: LimitEvent): { model: string; to: string } | undefined {
    if (!this.enabled || !this.manifest.models?.switch_keys?.length || limit.kind !== "per-model") return undefined;
    const model = exhaustedModel(limit.text, this.manifest, this.current);
    const to = model === undefined ? undefined : switchTarget(this.manifest, model, this.resting);
    return model !== undefined && to !== undefined ? { model, to } : undefined;
  }

  // Tries the switch: undefined when it took (the model left rests), else why not.
  async switchTo(run: SwitchingRun, timing: SwitchTiming, from: string, to: string): Promise<string | undefined> {
    this.attempt ??= new SwitchAttempt(run, this.manifest, timing);
    const failed = await this.attempt.to(to);
    if (failed) return failed;
    this.resting.add(from);
    this.current = to;
    return undefined;
  }

  // The agent drew something: a switch under way looks again.
  drawn(): void {
    this.attempt?.drawn();
  }
}
