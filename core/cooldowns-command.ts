import type { Context } from "./context.js";
import { readCooldowns, updateCooldowns } from "./cooldowns.js";
import { formatInstant } from "./eligibility.js";
import { redactorFor } from "./redaction.js";
import { result, type CommandResult } from "./result.js";
import { renderTable } from "./table.js";
import { formatWait } from "./time.js";

// uuldana cooldowns: the entries resting after a usage limit, and until when.
export async function listCooldowns(context: Context, options: { json?: boolean; now?: Date }): Promise<CommandResult> {
  const table = await readCooldowns(context.dirs.data);
  const now = options.now ?? new Date();
  const rows = [...table.entries]
    .filter(([, row]) => row.until.getTime() > now.getTime())
    .sort(([, a], [, b]) => a.until.getTime() - b.until.getTime());
  const stderr = table.problem ? `warning: ${table.problem}\n` : "";
  // a row written before a redact pattern was added (or by an older uuldana) is shown redacted all the same
  const redactor = redactorFor(context.config);
  const text = (row: { text: string | undefined }): string | null => (row.text === undefined ? null : redactor.redact(row.text));
  if (options.json) {
    const json = rows.map(([entry, row]) => ({
      entry,
      until: row.until.toISOString(),
      since: row.since?.toISOString() ?? null,
      source: row.source,
      kind: row.kind ?? null,
      text: text(row),
    }));
    return result(JSON.stringify(json, null, 2) + "\n", stderr);
  }
  if (rows.length === 0) return result("No entry is resting.\n", stderr);
  const lines = rows.map(([entry, row]) => [
    entry,
    formatInstant(row.until),
    formatWait(row.until.getTime() - now.getTime()),
    row.source,
    row.kind ?? "-",
    (text(row) ?? "").replace(/\s+/g, " ").slice(0, 60),
  ]);
  return result(renderTable(["ENTRY", "RESTING UNTIL", "LEFT", "SOURCE", "KIND", "TEXT"], lines), stderr);
}

// uuldana cooldowns clear [ENTRY]: ends one entry's rest, or every one.
export async function clearCooldowns(context: Context, entry: string | undefined): Promise<CommandResult> {
  let cleared: string[] = [];
  const problem = await updateCooldowns(context.dirs.data, (entries) => {
    cleared = entry ? (entries.delete(entry) ? [entry] : []) : [...entries.keys()];
    if (!entry) entries.clear();
  });
  const stderr = problem ? `warning: ${problem}\n` : "";
  if (entry && cleared.length === 0) return result(`${entry} was not resting.\n`, stderr);
  if (cleared.length === 0) return result("No entry was resting.\n", stderr);
  return result(`Cleared: ${cleared.join(", ")}.\n`, stderr);
}
