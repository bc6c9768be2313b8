import { join } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { loadManifestFile, manifestError } from "./manifest.js";
import { listManifestFiles, resolvePack } from "./packs.js";
import { packageRoot, type Env } from "../base/paths.js";
import type { Manifest, ManifestRecord, ManifestSource } from "./types.js";

// Every provider uuldana knows, by id, with the files that failed to load.
export interface Registry {
  providers: Map<string, ManifestRecord & { manifest: Manifest }>;
  broken: ManifestRecord[];
  notes: string[];
}

export interface RegistryOptions {
  configDir: string;
  packs: readonly string[];
  env?: Env;
}

// Loads built-in manifests, then packs in config order, then drop-ins; a later layer replaces an id with a note.
export async function loadRegistry(options: RegistryOptions): Promise<Registry> {
  const layers: { source: ManifestSource; files: Promise<string[]> }[] = [{ source: "built-in", files: listManifestFiles(BUILT_IN()) }];
  const broken: ManifestRecord[] = [];
  for (const spec of options.packs) {
    const files = resolvePack(spec, options.configDir, options.env).then(
      (pack) => pack.files,
      (error: unknown) => {
        if (!(error instanceof UuldanaError)) throw error;
        broken.push({ file: spec, source: `pack ${spec}`, error });
        return [];
      },
    );
    layers.push({ source: `pack ${spec}`, files });
  }
  layers.push({ source: "drop-in", files: listManifestFiles(join(options.configDir, "providers")) });

  const loaded = await Promise.all(
    layers.map(async (layer) => Promise.all((await layer.files).map((file) => loadManifestFile(file, layer.source)))),
  );

  const providers: Registry["providers"] = new Map();
  const notes: string[] = [];
  for (const records of loaded) {
    const inLayer = new Map<string, string>();
    for (const record of records) {
      if (!record.manifest) {
        broken.push(record);
        continue;
      }
      const id = record.manifest.id;
      const sameLayer = inLayer.get(id);
      if (sameLayer) {
        broken.push({ ...record, manifest: undefined, error: duplicateError(record.file, id, sameLayer) });
        continue;
      }
      inLayer.set(id, record.file);
      const previous = providers.get(id);
      if (previous) {
        notes.push(`${record.file} (${record.source}) replaces the ${previous.source} manifest of "${id}" (${previous.file})`);
      }
      providers.set(id, record as ManifestRecord & { manifest: Manifest });
    }
  }
  broken.sort((a, b) => a.file.localeCompare(b.file));
  return { providers, broken, notes };
}

// The built-in manifests alone, the valid ones: what uuldana knows of the agents it ships with. Read only; no adapter
// is imported.
export async function loadBuiltInManifests(): Promise<Manifest[]> {
  const records = await Promise.all((await listManifestFiles(BUILT_IN())).map((file) => loadManifestFile(file, "built-in")));
  return records.flatMap((record) => (record.manifest ? [record.manifest] : []));
}

// --- internal ---

const BUILT_IN = (): string => join(packageRoot(), "manifests");

function duplicateError(file: string, id: string, first: string): UuldanaError {
  return manifestError(file, [
    {
      pointer: "/id",
      message: `"${id}" is already the id of ${first}`,
      value: id,
      hint: "give this manifest another id, or remove one of the two files",
    },
  ]);
}
