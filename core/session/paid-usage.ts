import type { PaidUsage } from "../config/config.js";
import { paidOffer } from "../reader/paid-offer.js";
import { formatInstant } from "./eligibility.js";
import type { LimitEvent } from "./result.js";

// A question put to the user in uuldana's prompt: its lines, and the keys that answer it.
export interface Question {
  lines: string[];
  choices: { key: string; label: string }[];
}

// What the agent's offer of paid usage at a limit comes to: the user's paid_usage decides, "never" unless the user's
// own config says otherwise. Only "allow", or the user's own choice when asked, leaves the limit to the agent (which
// then spends); no answer in time, or no one to ask (--wait, no terminal), is "never".
export class PaidUsagePolicy {
  constructor(
    private readonly settings: { policy: PaidUsage; unattended: boolean; dismissSeconds: number },
    // asks the user in uuldana's prompt; undefined when no one answered in time or no one can be asked
    private readonly ask: (question: Question, timeoutMs: number) => Promise<string | undefined>,
  ) {}

  // The offer in a limit's text or on the screen around it (a menu under the banner), if any.
  offerAt(limit: LimitEvent, visible: readonly string[]): string | undefined {
    return limit.reason === "limit" ? paidOffer([limit.text, ...visible].join("\n")) : undefined;
  }

  // The limit as the policy leaves it: the offer recorded, and where the agent may spend, left to it (nothing rests).
  async road(limit: LimitEvent, offer: string | undefined, alternative: { entry: string; next: string | undefined }): Promise<LimitEvent> {
    if (!offer) return limit;
    const { policy, unattended } = this.settings;
    if (policy === "never") return { ...limit, paid: { offer, policy, taken: false } };
    if (policy === "allow") return taken(limit, { offer, policy, taken: true });
    if (unattended) return { ...limit, paid: { offer, policy, taken: false, answer: "unattended" } };
    const answer = await this.ask(question(limit, offer, alternative), this.settings.dismissSeconds * 1000);
    if (answer === "1") return taken(limit, { offer, policy, taken: true, answer: "go on" });
    return { ...limit, paid: { offer, policy, taken: false, answer: answer === "2" ? "move on" : "no answer" } };
  }
}

// --- internal ---

function taken(limit: LimitEvent, paid: NonNullable<LimitEvent["paid"]>): LimitEvent {
  const action = limit.action === "failover" || limit.action === "kept running" ? "left to the agent" : limit.action;
  return { ...limit, paid, action };
}

// The offer and the alternative, as uuldana's prompt puts them.
function question(limit: LimitEvent, offer: string, alternative: { entry: string; next: string | undefined }): Question {
  const { entry, next } = alternative;
  const returns = `${entry} returns at ${formatInstant(limit.restsUntil)}`;
  const instead = next ? `move on to ${next} now; ${returns}` : `do not pay: ${entry} stays as it is; ${returns}`;
  return {
    lines: [`${entry}'s usage allowance is gone, and it offers paid usage: "${offer}".`, "Paid usage costs money; uuldana takes it only if you say so."],
    choices: [
      { key: "1", label: `let ${entry} go on with paid usage (you may be charged; nothing rests)` },
      { key: "2", label: instead },
    ],
  };
}

// The agent has begun to spend paid credits (its own words say so) and the user's policy does not let it: its free
// allowance is gone, so the session moves on at the next turn boundary, and the entry rests like any entry whose
// allowance is gone without a reset it can read.
export function spendingLimit(line: string, cooldownMinutes: number, policy: PaidUsage): LimitEvent {
  return {
    source: "inferred",
    reason: "limit",
    kind: "credits",
    resetAt: null,
    text: line,
    after: "turn boundary",
    restsUntil: new Date(Date.now() + cooldownMinutes * 60_000),
    rested: false,
    action: "failover",
    paid: { offer: line, policy, taken: false },
    why: undefined,
    cooldownNotice: undefined,
  };
}
