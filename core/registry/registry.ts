import { realpath } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";

import { UuldanaError } from "../base/errors.js";
import { levelsAboveReference, referenceFor, referencesByExecutable } from "./level-reference.js";
import { loadManifestFile, manifestError } from "./manifest.js";
import { isInside, listManifestFiles, packLabel, resolvePack, type Pack } from "./packs.js";
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
  // the built-in ids a pack's manifest may replace, by the pack's name (config.json's "replaces")
  replaces?: Readonly<Record<string, string>>;
}

// Loads built-in manifests, then packs in config order, then drop-ins; a later layer replaces an id with a note.
export async function loadRegistry(options: RegistryOptions): Promise<Registry> {
  type Layer = { source: ManifestSource; files: string[]; pack?: Pack };
  const broken: ManifestRecord[] = [];
  const packLayer = async (spec: string): Promise<Layer> => {
    try {
      const pack = await resolvePack(spec, options.configDir, options.env);
      return { source: `pack ${packLabel(pack)}`, files: pack.files, pack };
    } catch (error) {
      if (!(error instanceof UuldanaError)) throw error;
      broken.push({ file: spec, source: `pack ${spec}`, error });
      return { source: `pack ${spec}`, files: [] };
    }
  };
  const layers: Layer[] = await Promise.all([
    listManifestFiles(BUILT_IN()).then((files): Layer => ({ source: "built-in", files })),
    ...options.packs.map(packLayer),
    listManifestFiles(join(options.configDir, "providers")).then((files): Layer => ({ source: "drop-in", files })),
  ]);

  const loaded = await Promise.all(
    layers.map(async (layer) => Promise.all(layer.files.map(async (file) => keepToPack(await loadManifestFile(file, layer.source), layer.pack)))),
  );

  const providers: Registry["providers"] = new Map();
  const notes: string[] = [];
  const references = referencesByExecutable(loaded[0]!.flatMap((record) => (record.manifest ? [record.manifest] : [])));
  loaded.forEach((records, index) => {
    const inLayer = new Map<string, string>();
    for (const record of records) {
      const refused = refusal(record, inLayer, references);
      if (refused) {
        broken.push(refused);
        continue;
      }
      const id = record.manifest!.id;
      inLayer.set(id, record.file);
      const previous = providers.get(id);
      const pack = layers[index]!.pack;
      // a pack takes a built-in's place only where the user said so (providers add --replace); a drop-in, the
      // user's own file, always does
      if (previous?.source === "built-in" && pack && options.replaces?.[id] !== pack.name) {
        notes.push(`${record.file} (${record.source}) reuses the built-in id "${id}", so it is not used; to use it instead of the built-in: uuldana providers add --replace ${id} ${pack.name}`);
        continue;
      }
      if (previous) notes.push(`${record.file} (${record.source}) replaces the ${previous.source} manifest of "${id}" (${previous.file})`);
      providers.set(id, { ...record, ...(previous ? { replaces: previous.source } : {}) } as ManifestRecord & { manifest: Manifest });
    }
  });
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

// Why a record cannot be used, as the broken record to report: no valid manifest, an id its own layer already has,
// or levels that carry more than the built-in manifest of the same executable allows.
function refusal(record: ManifestRecord, inLayer: ReadonlyMap<string, string>, references: ReadonlyMap<string, Manifest>): ManifestRecord | undefined {
  if (!record.manifest) return record;
  const sameLayer = inLayer.get(record.manifest.id);
  if (sameLayer) return { ...record, manifest: undefined, error: duplicateError(record.file, record.manifest.id, sameLayer) };
  const reference = record.source === "built-in" ? undefined : referenceFor(record.manifest, references);
  const issues = reference ? levelsAboveReference(record.manifest, reference) : [];
  return issues.length ? { file: record.file, source: record.source, error: manifestError(record.file, issues) } : undefined;
}

const BUILT_IN = (): string => join(packageRoot(), "manifests");

// A pack's manifest whose adapter lies outside the pack is refused: a pack runs its own code, never another pack's
// or uuldana's files.
async function keepToPack(record: ManifestRecord, pack: Pack | undefined): Promise<ManifestRecord> {
  const adapter = record.manifest?.adapter;
  if (!pack || !adapter) return record;
  const file = await realpath(resolve(dirname(record.file), adapter)).catch(() => resolve(dirname(record.file), adapter));
  if (isInside(pack.folder, file)) return record;
  const error = manifestError(record.file, [
    {
      pointer: "/adapter",
      message: `names a file outside its pack ${packLabel(pack)} (${file})`,
      value: adapter,
      hint: "a pack's adapter is one of the pack's own files: ship it in the pack and name it relative to the manifest",
    },
  ]);
  return { file: record.file, source: record.source, error };
}

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
