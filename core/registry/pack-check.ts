import { mkdtempSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { assertNpmSucceeded, dependenciesOf, runNpm, versionOf } from "./npm.js";
import type { PackOptions } from "./pack-install.js";
import { packLabel } from "./packs.js";
import { loadRegistry } from "./registry.js";
import type { ManifestRecord } from "./types.js";

// A pack checked before it is added: installed by npm into a temporary folder, then read there as the registry will
// read it once installed, beside the user's other packs and drop-ins. A package that is not a pack, or a manifest
// that is not usable, is refused here, before anything of the user's changes.

// What the side install found: the package, its providers and the registry's notes about them, named in the
// temporary folder (`folder`), which dispose() removes.
export interface CheckedPack {
  name: string;
  version: string | null;
  folder: string;
  providers: { id: string; name: string; file: string }[];
  notes: string[];
  dispose(): void;
}

// A pack's package name: uuldana-provider-<name>, or @<scope>/uuldana-provider-<name>.
export const PACK_NAME = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?uuldana-provider-[a-z0-9][a-z0-9._~-]*$/;

// Installs the pack on the side and reads it; throws the reason it cannot be added (the temporary folder removed).
export async function checkPack(spec: string, local: string | undefined, packs: readonly string[], options: PackOptions & { replaces: Record<string, string> }): Promise<CheckedPack> {
  const staging = mkdtempSync(join(tmpdir(), "uuldana-pack-"));
  const dispose = (): void => rmSync(staging, { recursive: true, force: true });
  try {
    assertNpmSucceeded(await runNpm("install", [local ?? spec], { prefix: staging, env: options.env, allowScripts: options.allowScripts }), spec);
    const name = Object.keys(dependenciesOf(staging))[0];
    if (!name) throw new UuldanaError("E_PACK_INSTALL", `npm installed nothing for "${spec}"`, { hint: "name an npm package, a folder with a package.json, or a .tgz file", exitCode: 1 });
    // as the registry names its files: links resolved (a temporary folder may be reached through one)
    const folder = realpathSync(join(staging, "node_modules", name));
    const version = versionOf(folder);
    if (!PACK_NAME.test(name)) {
      throw new UuldanaError("E_PACK_INVALID", `"${spec}" is the package ${name}, which is not a provider pack: a pack's name is uuldana-provider-<name> or @<scope>/uuldana-provider-<name>`, {
        hint: `rename the package (for example uuldana-provider-${name.replace(/^@[^/]+\//, "")}), or put its folder's path in "packs" of ${options.configFile} to use it as it is`,
        exitCode: 1,
      });
    }
    const label = packLabel({ name, version });
    const replaces = { ...options.replaces, ...(options.replace ? { [options.replace]: name } : {}) };
    const registry = await loadRegistry({ configDir: options.configDir, packs: [...packs.filter((other) => other !== name), folder], replaces, env: options.env });
    // the side install is gone once an error is read: its files are named where the author has them
    const shown = (text: string): string => text.replaceAll(folder, local && statSync(local).isDirectory() ? local : label);
    refuseBroken(registry.broken.filter((record) => record.source === `pack ${label}` || record.file === folder).map((record) => record.error!), label, shown);
    const providers = [...registry.providers.values()].filter((record) => record.source === `pack ${label}`);
    if (options.replace) refuseReplace(options.replace, providers, label);
    const reused = registry.notes.filter((note) => note.includes(`(pack ${label}) reuses the built-in id`)).map((note) => /reuses the built-in id "([^"]+)"/.exec(note)![1]!);
    if (providers.length === 0 && reused.length > 0) {
      throw new UuldanaError("E_PACK_INVALID", `provider pack ${label} was not added: its manifests reuse built-in ids (${reused.join(", ")}), and a pack replaces a built-in only when you say so`, {
        hint: `to use its manifest instead of the built-in: uuldana providers add --replace ${reused[0]} ${spec}`,
        exitCode: 1,
      });
    }
    if (providers.length === 0) {
      throw new UuldanaError("E_PACK_INVALID", `provider pack ${label} was not added: its package.json declares no manifest file that exists`, {
        hint: 'list its manifests in package.json, "uuldana": {"manifests": ["manifests"]}, and ship them ("files")',
        exitCode: 1,
      });
    }
    return {
      name,
      version,
      folder,
      providers: providers.map((record) => ({ id: record.manifest.id, name: record.manifest.name, file: record.file })),
      notes: registry.notes.filter((note) => note.includes(`(pack ${label})`) || note.includes(`the pack ${label} manifest`)),
      dispose,
    };
  } catch (error) {
    dispose();
    throw error;
  }
}

// --- internal ---

// A manifest written for another provider API is refused with its own error; any other broken one with every problem.
function refuseBroken(errors: UuldanaError[], label: string, shown: (text: string) => string): void {
  if (errors.length === 0) return;
  const api = errors.find((error) => error.code === "E_MANIFEST_API");
  if (api) throw new UuldanaError("E_MANIFEST_API", `${shown(api.message)}: it was not added`, { hint: api.hint, exitCode: 1 });
  const problems = errors.flatMap((error) => [error.message, ...error.details, ...(error.details.length === 0 && error.hint ? [`  hint: ${error.hint}`] : [])]);
  throw new UuldanaError("E_PACK_INVALID", `provider pack ${label} was not added: ${errors.length === 1 ? "one of its manifests is" : `${errors.length} of its manifests are`} not usable`, {
    details: problems.map((line) => `  ${shown(line)}`),
    hint: `fix the pack and add it again; "uuldana providers validate <its manifests folder>" checks them`,
    exitCode: 1,
  });
}

// --replace ID names a built-in provider the pack brings a manifest of.
function refuseReplace(id: string, providers: readonly ManifestRecord[], label: string): void {
  const record = providers.find((one) => one.manifest?.id === id);
  if (record?.replaces === "built-in") return;
  const ids = providers.map((one) => one.manifest?.id).join(", ") || "none";
  throw new UuldanaError("E_USAGE", `--replace ${id}: ${record ? `"${id}" is not a built-in provider, so nothing is replaced` : `provider pack ${label} brings no manifest of "${id}"`}`, {
    details: [`  its providers: ${ids}`],
    hint: record ? `add the pack without --replace` : `name one of its providers that has a built-in id, or add it without --replace`,
    exitCode: 2,
  });
}
