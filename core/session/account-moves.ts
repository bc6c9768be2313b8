import type { Assessment } from "./eligibility.js";

// A provider whose vendor's terms do not allow automated rotation between accounts (its manifest's account_switch is
// "manual"): uuldana never moves a session from one of its entries to another of its entries by itself. Each such
// candidate is refused for this move, with the reason, and stays the user's to start (uuldana run --provider ENTRY).
export function keepAccountsApart(rows: Assessment[], from: { entry: string; provider: string } | undefined): void {
  if (!from) return;
  for (const row of rows) {
    if (row.entry.id !== from.provider || row.entry.key === from.entry || row.manifest?.account_switch !== "manual") continue;
    row.reasons.push(manualSwitchReason(row, from.entry));
    row.eligible = false;
  }
}

function manualSwitchReason(row: Assessment, from: string): string {
  const name = row.manifest?.name ?? row.entry.id;
  return `not moved to from ${from} by itself: it is another ${name} account, and ${name}'s terms do not allow automated rotation between accounts (start it yourself: uuldana run --provider ${row.entry.key})`;
}
