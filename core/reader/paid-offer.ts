// How the reader tells money in a limit: the agent offers to go on with paid usage (credits it sells, extra usage,
// funds, a banked limit reset to redeem), or shows that it has started spending such credits. Kept apart from the
// verdict: an offer changes what uuldana may do at a limit (the user's paid_usage), never whether it is one.

// An offer the user could take from the agent's screen: a command that buys or spends, credits to buy or add, funds to
// add, extra usage, a banked reset to use or redeem.
const OFFER = new RegExp(
  [
    String.raw`(?:^|\s)/(?:usage-credits|extra-usage|limit-reset|rate-limit-options)\b`,
    String.raw`\b(?:buy|purchase|add|get|top up)\b(?:(?![.!?]\s).){0,30}?\bcredits\b`,
    String.raw`\badd funds\b`,
    String.raw`\bextra usage\b`,
    String.raw`\b(?:use|using|redeem|redeeming)\b(?:(?![.!?]\s).){0,20}?\b(?:limit|usage) resets?\b`,
    String.raw`\breset your [\w-]+ limit now\b`,
    String.raw`\bavailable (?:usage )?limit resets?\b`,
    String.raw`\bredeem\b(?:(?![.!?]\s).){0,30}?\breset\b`,
    String.raw`\b(?:continue|keep (?:going|using|working)|go on)\b(?:(?![.!?]\s).){0,30}?\b(?:usage|paid|ai) credits\b`,
  ].join("|"),
  "i",
);

// Words without which a text can hold no offer: most text is ruled out by this one test.
const MAYBE = /credit|funds|extra[ -]usage|reset|rate-limit-options/i;

// An organisation's administrator is the one asked: nothing the user can take from the agent.
const NOT_OURS = /\b(?:ask|contact) your (?:admin|administrator)\b/i;

// The offer of paid usage a limit's text (and the screen around it) holds, as the line that makes it (trimmed, at most
// 200 characters); undefined when there is none.
export function paidOffer(text: string): string | undefined {
  if (!MAYBE.test(text)) return undefined;
  for (const line of text.split("\n")) {
    if (NOT_OURS.test(line)) continue;
    if (OFFER.test(line)) return line.trim().slice(0, 200);
  }
  return undefined;
}

// The agent shows that it now spends paid credits (its status line or its own words): "is drawing from usage
// credits", "now runs on usage credits".
const SPENDING = /\b(?:(?:is |now )?(?:drawing|draws|running|runs) (?:from|on)|now uses|spending) (?:your )?(?:usage|extra|paid|ai) credits\b/i;

// The first line of a batch that shows the agent spending paid credits, or undefined.
export function paidSpending(lines: readonly string[]): string | undefined {
  return lines.find((line) => /credits/i.test(line) && SPENDING.test(line))?.trim();
}
