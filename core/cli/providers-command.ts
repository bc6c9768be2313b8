import { stat } from "node:fs/promises";
import { resolve } from "node:path";

import { UuldanaError, formatError } from "../base/errors.js";
import { accountOf } from "../config/config.js";
import type { Context } from "../config/context.js";
import { ceilingOrigin } from "../config/levels.js";
import { levelsAboveReference, referenceFor, referencesByExecutable } from "../registry/level-reference.js";
import { loadManifestFile, manifestError } from "../registry/manifest.js";
import { loadBuiltInManifests } from "../registry/registry.js";
import { listManifestFiles } from "../registry/packs.js";
import { describeRestingModels, formatInstant, type Assessment } from "../session/eligibility.js";
import { assessProviders, type ListOptions } from "../session/priority.js";
import { result, type CommandResult } from "./result.js";
import { renderTable } from "./table.js";

// uuldana providers list: the priority list with each entry's state, as a table or JSON.
export async function listProviders(context: Context, options: ListOptions = {}): Promise<CommandResult> {
  const { rows, notes, ceiling, ceilingFrom, records } = await assessProviders(context, options);
  const stderr = notes.length ? notes.join("\n") + "\n" : "";
  const sourceOf = (row: Assessment): string | null => records.get(row.entry.id)?.source ?? null;
  // a provider whose built-in (or earlier) manifest another one replaced says so on every listing
  const replacedOf = (row: Assessment): string | null => records.get(row.entry.id)?.replaces ?? null;
  if (options.json) return result(JSON.stringify(rows.map((row) => toJson(row, sourceOf(row), replacedOf(row))), null, 2) + "\n", stderr);
  if (rows.length === 0) {
    return result(`No providers: none is listed in ${context.config.userFile} and none is installed.\n`, stderr);
  }
  const table = renderTable(
    ["#", "ENTRY", "PROVIDER", "SOURCE", "VERIFIED", "VERSION", "SIGNED IN", "LEVEL", "PROMPT", "RESTING UNTIL", "STATUS"],
    rows.map((row) => [
      String(row.order),
      // an entry that names an account of its own shows it: its rests are that account's
      accountOf(row.entry) === row.entry.key ? row.entry.key : `${row.entry.key} (account ${accountOf(row.entry)})`,
      row.entry.id,
      (sourceOf(row) ?? "-") + (replacedOf(row) ? `, replaces ${replacedOf(row)}` : ""),
      verifiedOf(row) ?? "-",
      row.detection?.version ?? "-",
      row.manifest ? SIGNED_IN[String(row.signIn.signedIn)]! : "-",
      row.level ?? "-",
      row.prompt,
      row.restingUntil ? formatInstant(row.restingUntil) : "-",
      (row.eligible ? "ready" : row.reasons.join("; ")) + (row.restingModels.length ? ` (model resting: ${describeRestingModels(row.restingModels)})` : ""),
    ]),
  );
  const first = rows.find((row) => row.eligible);
  const origin = ceilingOrigin({ level: ceiling, from: ceilingFrom }, false);
  const shown = `Ceiling ${ceiling}${origin ? ` (${origin})` : ""}`;
  const summary = first ? `${shown}: a new session starts ${first.entry.key} at ${first.level}.` : `${shown}: no entry can run now.`;
  return result(`${table}\n${summary}\n`, stderr);
}

// Checks manifest files (or folders of them) for authors; exit 1 when any is invalid, 2 when a folder holds none.
export async function validateManifests(paths: readonly string[], cwd: string): Promise<CommandResult> {
  const files: string[] = [];
  const empty: string[] = [];
  for (const path of paths) {
    const absolute = resolve(cwd, path);
    const isFolder = await stat(absolute).then((info) => info.isDirectory(), () => false);
    const found = isFolder ? await listManifestFiles(absolute) : [absolute];
    if (found.length === 0) empty.push(absolute);
    files.push(...found);
  }
  let stdout = "";
  let stderr = "";
  let invalid = 0;
  // levels are judged as the registry judges them: against the built-in manifest of the executable they run
  const references = referencesByExecutable(await loadBuiltInManifests());
  for (const file of files) {
    const record = await loadManifestFile(file, "drop-in");
    const reference = record.manifest ? referenceFor(record.manifest, references) : undefined;
    const issues = record.manifest && reference ? levelsAboveReference(record.manifest, reference) : [];
    if (record.manifest && issues.length === 0) stdout += `valid: ${file} (${record.manifest.id})\n`;
    else {
      invalid++;
      stderr += formatError(record.error ?? manifestError(file, issues));
    }
  }
  for (const folder of empty) {
    stderr += formatError(new UuldanaError("E_USAGE", `no manifest files found in ${folder}: it is a folder with no .json files in it`, { hint: "name manifest files, or folders that hold them" }));
  }
  if (empty.length > 0) return result(stdout, stderr, 2);
  return result(stdout, stderr, invalid > 0 ? 1 : 0);
}

// --- internal ---

// How a manifest was checked; one that does not say was checked against documentation at best. Null: no manifest.
function verifiedOf(row: Assessment): "binary" | "documentation" | null {
  return row.manifest ? (row.manifest.verified ?? "documentation") : null;
}

// The SIGNED IN column: what the entry's files and environment show, "?" where its manifest cannot tell.
const SIGNED_IN: Record<string, string> = { true: "yes", false: "no", null: "?" };

function toJson(row: Assessment, source: string | null, replaces: string | null): Record<string, unknown> {
  return {
    entry: row.entry.key,
    provider: row.entry.id,
    // the identity its allowance belongs to: its rests are kept, and shared, by it
    account: accountOf(row.entry),
    name: row.manifest?.name ?? null,
    // the variables that select another account of this CLI, and the values this entry gives them
    account_env: Object.fromEntries(Object.keys(row.manifest?.account_env ?? {}).map((name) => [name, row.entry.env[name] === undefined ? null : "set"])),
    origin: row.entry.origin,
    // where its manifest came from: built-in, drop-in, or "pack <name>@<version>"; null for an unknown provider
    source,
    // the source of the manifest of the same id this one took the place of (a drop-in over the built-in): null if none
    replaces,
    // how its manifest's flags and wording were checked: "binary" (against the real CLI) or "documentation"
    verified: verifiedOf(row),
    installed: row.detection?.installed === true,
    path: row.detection?.path ?? null,
    version: row.detection?.version ?? null,
    version_from: row.detection?.versionFrom ?? null,
    level: row.level,
    prompt: row.prompt,
    resting_until: row.restingUntil?.toISOString() ?? null,
    // the models that rest on their own after a per-model limit: the entry runs on another
    resting_models: row.restingModels.map((one) => ({ model: one.model, until: one.until.toISOString() })),
    // whether its CLI has an account set up, from its files and environment: null where its manifest cannot tell
    signed_in: row.signIn.signedIn,
    eligible: row.eligible,
    reasons: row.reasons,
  };
}
