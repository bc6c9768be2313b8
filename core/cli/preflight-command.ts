import { UuldanaError } from "../base/errors.js";
import { closestWord } from "../base/suggest.js";
import type { Context } from "../config/context.js";
import { PREFLIGHT_CHECKS, preflight, type EntryPreflight } from "../session/preflight.js";
import { result, type CommandResult } from "./result.js";

// uuldana preflight [ENTRY]: could this entry (every entry, when none is named) take over now? One line per check
// with its reason, or one JSON array; exit 0 when every entry checked is ready, 1 when one is not.
export async function preflightCommand(context: Context, entry: string | undefined, options: { json?: boolean; now?: Date }): Promise<CommandResult> {
  const checked = await preflight(context, { entry, now: options.now });
  if (entry !== undefined && checked.entries.length === 0) {
    throw new UuldanaError("E_USAGE", `preflight ${entry}: no entry has this key`, {
      details: [`  entries: ${checked.keys.join(", ") || "none"}`],
      hint: near(entry, checked.keys) ?? 'run "uuldana providers list" to see the priority list',
    });
  }
  const stderr = checked.notes.length ? checked.notes.join("\n") + "\n" : "";
  const ready = checked.entries.length > 0 && checked.entries.every((one) => one.ready);
  const exitCode = ready ? 0 : 1;
  if (options.json) {
    const json = checked.entries.map((one) => ({ entry: one.entry, provider: one.provider, ready: one.ready, checks: one.checks }));
    return result(JSON.stringify(json, null, 2) + "\n", stderr, exitCode);
  }
  if (checked.entries.length === 0) {
    return result(`No providers: none is listed in ${context.config.userFile} and none is installed.\n`, stderr, exitCode);
  }
  return result(checked.entries.map(render).join("\n"), stderr, exitCode);
}

// --- internal ---

const WIDTH = Math.max(...PREFLIGHT_CHECKS.map((name) => name.length));

// "codex (Codex CLI): ready", then "  ✓ installed  /usr/local/bin/codex" and the other checks.
function render(one: EntryPreflight): string {
  const what = one.name === undefined ? one.provider : one.provider === one.entry ? one.name : `${one.provider}, ${one.name}`;
  const lines = [`${one.entry} (${what}): ${one.ready ? "ready" : "not ready"}`];
  for (const check of one.checks) lines.push(`  ${check.ok ? "✓" : "✗"} ${check.name.padEnd(WIDTH)}  ${check.detail}`);
  return lines.join("\n") + "\n";
}

function near(entry: string, keys: readonly string[]): string | undefined {
  const found = closestWord(entry, keys);
  return found ? `did you mean "uuldana preflight ${found}"?` : undefined;
}
