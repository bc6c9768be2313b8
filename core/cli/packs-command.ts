import type { Context } from "../config/context.js";
import { addPack, removePack } from "../registry/pack-install.js";
import { packLabel } from "../registry/packs.js";
import { result, type CommandResult } from "./result.js";

// uuldana providers add and remove: a provider pack installed into the config dir and named in packs, or taken out.

// Adds a pack and says which providers it brought, and what they replace.
export async function addPackCommand(context: Context, spec: string, options: { allowScripts?: boolean }): Promise<CommandResult> {
  const added = await addPack(spec, packOptions(context, options.allowScripts));
  const label = packLabel(added);
  const head =
    added.change === "added"
      ? `added ${label} to packs in ${context.config.userFile}`
      : `updated ${label}; packs in ${context.config.userFile} already named it`;
  const providers = added.providers.map((provider) => `  ${provider.id} (${provider.name}): ${provider.file}`);
  const stderr = added.notes.map((note) => `note: ${note}\n`).join("");
  return result([head, ...providers, ""].join("\n"), stderr);
}

// Removes a pack from packs and uninstalls it when it was installed in the config dir.
export async function removePackCommand(context: Context, spec: string): Promise<CommandResult> {
  return result(`${await removePack(spec, packOptions(context))}\n`);
}

// --- internal ---

function packOptions(context: Context, allowScripts?: boolean) {
  return { configDir: context.dirs.config, configFile: context.config.userFile, cwd: context.cwd, env: context.env, allowScripts };
}
