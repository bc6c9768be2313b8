import { UuldanaError } from "../base/errors.js";
import type { Context } from "../config/context.js";
import { missingAgents, orphanedEntries, providerIds, pruneEntries, type MissingAgent } from "../registry/pack-entries.js";
import { addPack, removePack } from "../registry/pack-install.js";
import { packLabel, resolvePack } from "../registry/packs.js";
import { result, type CommandResult } from "./result.js";

// uuldana providers add and remove: a provider pack installed into the config dir and named in packs, or taken out.

// Adds a pack and says which providers it brought, and what they replace.
export async function addPackCommand(context: Context, spec: string, options: { allowScripts?: boolean; replace?: string }): Promise<CommandResult> {
  const added = await addPack(spec, { ...packOptions(context, options.allowScripts), ...(options.replace ? { replace: options.replace } : {}) });
  const label = packLabel(added);
  const head =
    added.change === "added"
      ? `added ${label} to packs in ${context.config.userFile}`
      : `updated ${label}; packs in ${context.config.userFile} already named it`;
  const providers = added.providers.map((provider) => `  ${provider.id} (${provider.name}): ${provider.file}${provider.id === options.replace ? ` (replaces the built-in ${provider.id})` : ""}`);
  const missing = (await missingAgents(added.providers, context.dirs.config, context.env)).map(missingLine);
  const stderr = [...added.notes, ...missing].map((note) => `note: ${note}\n`).join("");
  return result([head, ...providers, ""].join("\n"), stderr);
}

// Removes a pack from packs and uninstalls it when it was installed in the config dir; names the entries of
// providers that used a provider only it brought, or takes them out with --prune.
export async function removePackCommand(context: Context, spec: string, options: { prune?: boolean } = {}): Promise<CommandResult> {
  // which providers it brought, read before it goes (a pack that is not installed brought none)
  const ids = await resolvePack(spec, context.dirs.config, context.env).then(
    (pack) => providerIds(pack.files),
    () => [],
  );
  const removed = await removePack(spec, packOptions(context));
  const file = context.config.userFile;
  const packs = context.config.packs.filter((pack) => pack !== spec);
  const orphans = await orphanedEntries(file, ids, { configDir: context.dirs.config, packs, env: context.env });
  if (!options.prune || orphans.length === 0) {
    const notes = orphans.map(({ key, id }) => `note: the entry "${key}" in providers of ${file} names ${id}, which no manifest provides now; take it out of providers, or add the pack again (remove --prune takes such entries out with the pack)\n`);
    return result(`${removed}\n`, notes.join(""));
  }
  const problem = pruneEntries(file, orphans);
  if (problem) throw new UuldanaError("E_CONFIG_UNREADABLE", problem, { hint: "make config.json writable, then take the entries out of providers", exitCode: 1 });
  const pruned = orphans.map(({ key, id }) => `  took the entry "${key}" out of providers: no manifest provides ${id} now`);
  return result([removed, ...pruned, ""].join("\n"));
}

// --- internal ---

// "example cannot run yet: no uuldana-example-agent on PATH; …"
function missingLine(agent: MissingAgent): string {
  const head = `${agent.id} cannot run yet: no ${agent.executables.join(" or ")} on PATH`;
  if (agent.packBin) return `${head}; the pack installed it in ${agent.packBin}: put that folder on PATH`;
  return `${head}; install its agent CLI, then "uuldana preflight ${agent.id}" checks it`;
}

function packOptions(context: Context, allowScripts?: boolean) {
  return { configDir: context.dirs.config, configFile: context.config.userFile, cwd: context.cwd, env: context.env, allowScripts };
}
