import { closestWord } from "../base/suggest.js";
import { hostname } from "node:os";

import { accountOf, entriesOfAccount } from "../config/config.js";
import type { Context } from "../config/context.js";
import { ALL_ENTRIES, accountOfKey, modelKey, readCooldowns, updateCooldowns, type CooldownTable } from "../session/cooldowns.js";
import { formatInstant } from "../session/eligibility.js";
import { UuldanaError } from "../base/errors.js";
import { redactorFor } from "../config/redaction.js";
import { loadRegistry } from "../registry/registry.js";
import { result, type CommandResult } from "./result.js";
import { renderTable } from "./table.js";
import { formatWait } from "../base/time.js";

// uuldana cooldowns: the accounts resting after a usage limit, and until when. With a shared store, its rests are
// merged into the local table first (waited for at most MERGE_WAIT_MS).
export async function listCooldowns(context: Context, options: { json?: boolean; now?: Date }): Promise<CommandResult> {
  const said = await mergeShared(context);
  const table = usable(await readCooldowns(context.dirs.data));
  const now = options.now ?? new Date();
  const rows = [...table.entries]
    .filter(([, row]) => row.until.getTime() > now.getTime())
    .sort(([, a], [, b]) => a.until.getTime() - b.until.getTime());
  const stderr = said.map((line) => `${line}\n`).join("") + (table.problem ? `warning: ${table.problem}\n` : "");
  // a row is kept by account: named by the entries of that account (the account itself when none is listed)
  const accounts = new Map<string, string[]>();
  for (const entry of context.config.entries) accounts.set(accountOf(entry), [...(accounts.get(accountOf(entry)) ?? []), entry.key]);
  const entryOf = (key: string, row: { model?: string | undefined }): string => {
    const account = accountOfKey(key, row.model);
    const named = accounts.get(account)?.join(", ");
    return named === undefined || named === account ? key : row.model ? `${named} (${account}@${row.model})` : `${named} (${account})`;
  };
  // a row written before a redact pattern was added (or by an older uuldana) is shown redacted all the same
  const redactor = redactorFor(context.config);
  const text = (row: { text: string | undefined }): string | null => (row.text === undefined ? null : redactor.redact(row.text));
  if (options.json) {
    const json = rows.map(([entry, row]) => ({
      entry,
      account: accountOfKey(entry, row.model),
      until: row.until.toISOString(),
      since: row.since?.toISOString() ?? null,
      source: row.source,
      kind: row.kind ?? null,
      text: text(row),
      ...(row.model ? { model: row.model } : {}),
      ...(row.machine ? { machine: row.machine } : {}),
    }));
    return result(JSON.stringify(json, null, 2) + "\n", stderr);
  }
  if (rows.length === 0) return result("No entry is resting.\n", stderr);
  const lines = rows.map(([entry, row]) => [
    entryOf(entry, row),
    formatInstant(row.until),
    formatWait(row.until.getTime() - now.getTime()),
    row.source,
    row.kind ?? "-",
    (text(row) ?? "").replace(/\s+/g, " ").slice(0, 60),
  ]);
  return result(renderTable(["ENTRY", "RESTING UNTIL", "LEFT", "SOURCE", "KIND", "TEXT"], lines), stderr);
}

// uuldana cooldowns clear [ENTRY]: ends one entry's rest, or every one; an entry uuldana does not know is a mistake.
export async function clearCooldowns(context: Context, given: string | undefined): Promise<CommandResult> {
  const before = usable(await readCooldowns(context.dirs.data));
  // an entry's rests are its account's: clearing one entry clears every entry of its account
  const listed = context.config.entries.find((one) => one.key === given);
  const entry = listed ? accountOf(listed) : given;
  if (given && entry && !before.entries.has(entry)) {
    const known = await knownEntries(context, before);
    if (!known.includes(given)) {
      throw new UuldanaError("E_USAGE", `cooldowns clear ${given}: no entry has this key`, {
        details: [`  entries: ${known.join(", ") || "none"}`],
        hint: closestWord(given, known) ? `did you mean "uuldana cooldowns clear ${closestWord(given, known)}"?` : 'run "uuldana cooldowns" to see which entries are resting',
      });
    }
  }
  let cleared: string[] = [];
  const now = new Date();
  const write = await updateCooldowns(
    context.dirs.data,
    (entries, clears) => {
      // an entry's rest and the rests of its models; the clear is remembered, so a rest seen before it and saved
      // beside the table (by a uuldana that could not take the lock then) never brings the rest back
      cleared = [...entries].filter(([key, row]) => !entry || key === entry || (row.model !== undefined && key === modelKey(entry, row.model))).map(([key]) => key);
      for (const key of cleared) entries.delete(key);
      clears.set(entry ?? ALL_ENTRIES, now);
    },
    now,
  );
  if (!write.written) {
    // a stray lock's reason says how to remove it; a busy one passes
    const hint = write.notice?.includes("remove") ? undefined : "try again in a moment";
    throw new UuldanaError("E_COOLDOWNS_LOCKED", `nothing was cleared: ${write.notice}`, { ...(hint ? { hint } : {}), exitCode: 1 });
  }
  const stderr = write.notice ? `warning: ${write.notice}\n` : "";
  if (given && cleared.length === 0) return result(`${given} was not resting.\n`, stderr);
  if (cleared.length === 0) return result("No entry was resting.\n", stderr);
  return result(`Cleared: ${cleared.join(", ")}.\n`, stderr);
}

// --- internal ---

// How long cooldowns waits for the store's rests. No failover waits on it: it is the merge of a command the user ran to
// see them (reading every key and writing the table), so it is given room on a busy machine; a store that hangs is
// still given up on after 2 s without an answer (shared-rests.ts).
const MERGE_WAIT_MS = 3000;

// The shared store's rests merged into the local table, when shared_rests names a store; what it had to say.
async function mergeShared(context: Context): Promise<string[]> {
  const store = context.config.sharedRests;
  if (!store) return [];
  const { SharedRests } = await import("../session/shared-rests.js");
  const said: string[] = [];
  const entriesOf = (account: string): string[] => entriesOfAccount(context.config.entries, account);
  const meanwhile = "the rests shown are this machine's alone";
  const shared = await SharedRests.open({ store, dataDir: context.dirs.data, machine: hostname(), entriesOf, meanwhile, listen: false, notice: (line) => void said.push(line) }, MERGE_WAIT_MS);
  shared.close();
  return said;
}

// A table that is not a file (a folder, a named pipe) cannot be listed or cleared: a clear error, exit 2.
function usable(table: CooldownTable): CooldownTable {
  if (table.fault !== "not-a-file") return table;
  throw new UuldanaError("E_COOLDOWNS_UNREADABLE", table.what ?? `cannot read ${table.file}`, { ...(table.fix ? { hint: table.fix } : {}) });
}

// The entries of the priority lists (yours, the project's, and the installed providers auto_detect may add),
// then the rows of the table.
async function knownEntries(context: Context, table: CooldownTable): Promise<string[]> {
  const keys = context.config.entries.map((entry) => entry.key);
  if (context.config.autoDetect) {
    const registry = await loadRegistry({ configDir: context.dirs.config, packs: context.config.packs, replaces: context.config.replaces, env: context.env });
    keys.push(...[...registry.providers.keys()].sort());
  }
  keys.push(...table.entries.keys());
  return [...new Set(keys)];
}
