import { modelKey, readCooldowns, restingUntil, watchCooldowns } from "./cooldowns.js";
import { goingHome, sharedRest } from "./limit-events.js";
import type { LimitEvent } from "./result.js";

// Rests seen in the cooldown table while a run runs. Another uuldana session that rested this entry (or the model it
// runs on) means its account is at the wall: the run proposes moving on at the next turn boundary instead of walking
// into it. An entry higher in the list whose rest is over proposes going back to it (return_home), once per reset.

export interface RestWatchOptions {
  dataDir: string;
  // the account the running entry's allowance belongs to: its rows in the table
  account: string;
  // the model the agent runs on now, when known
  model: () => string | undefined;
  // the entries higher in the list that only rest, by when they return (return_home; else none)
  home: { entry: string; account: string; until: Date }[];
  // watch the table for rests written elsewhere (another entry can take over)
  shared: boolean;
  cooldownMinutes: number;
  // the event proposed, with what it means; true when the run took it
  propose: (event: "rest-elsewhere" | "home-due", limit: LimitEvent) => boolean;
}

export class RestWatch {
  private readonly unwatch: (() => void) | undefined;
  private readonly timer: NodeJS.Timeout | undefined;
  // the entries to go back to, the first to return first
  private readonly home: { entry: string; account: string; until: Date }[];
  private proposed = false;
  private closed = false;

  constructor(private readonly options: RestWatchOptions) {
    this.unwatch = options.shared ? watchCooldowns(options.dataDir, () => void this.look()) : undefined;
    this.home = [...options.home].sort((a, b) => a.until.getTime() - b.until.getTime());
    const first = this.home[0];
    this.timer = first ? setTimeout(() => void this.look(), Math.max(0, first.until.getTime() - Date.now()) + 50).unref() : undefined;
  }

  close(): void {
    this.closed = true;
    this.unwatch?.();
    clearTimeout(this.timer);
  }

  private async look(): Promise<void> {
    if (this.proposed || this.closed) return;
    const { dataDir, account, cooldownMinutes } = this.options;
    const table = await readCooldowns(dataDir);
    const now = new Date();
    const model = this.options.model();
    const own = [table.entries.get(account), model ? table.entries.get(modelKey(account, model)) : undefined].find((row) => row && row.until > now);
    const home = this.home.find((row) => !restingUntil(table, row.account, now));
    if (this.proposed || this.closed || (!own && !home)) return;
    this.proposed = own ? this.options.propose("rest-elsewhere", sharedRest(own, cooldownMinutes)) : this.options.propose("home-due", goingHome(home!));
  }
}
