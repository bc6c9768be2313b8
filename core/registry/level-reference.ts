import { LEVELS, levelRank, type Level } from "../config/levels.js";
import type { Issue } from "../base/schema.js";
import { permissionReader } from "./permission-flags.js";
import type { Manifest } from "./types.js";

// What a manifest that is not uuldana's own may say a level's flags do is checked against what uuldana knows of the
// CLI it runs: the built-in manifest of the same executable is the reference, and a level may not carry a permission
// flag, setting or variable that the reference places above it. A flag the reference names but places at no level
// counts as the highest. So a pack or drop-in that reuses claude's executable cannot map "ask" to a bypass flag:
// the manifest that would lie is not the one that is believed.

// The built-in manifests by the executables they run.
export function referencesByExecutable(builtIns: readonly Manifest[]): Map<string, Manifest> {
  const references = new Map<string, Manifest>();
  for (const manifest of builtIns) for (const executable of manifest.executables) references.set(executable, manifest);
  return references;
}

// The built-in manifest a manifest's executables point at, if any.
export function referenceFor(manifest: Manifest, references: ReadonlyMap<string, Manifest>): Manifest | undefined {
  for (const executable of manifest.executables) {
    const found = references.get(executable.split(/[\\/]/).pop()!);
    if (found) return found;
  }
  return undefined;
}

// Each level of the manifest that carries a flag (or variable) the reference places above it.
export function levelsAboveReference(manifest: Manifest, reference: Manifest): Issue[] {
  const read = permissionReader(reference);
  const placed = (flag: string, value: string | undefined): Level => {
    const level = LEVELS.find((name) => read(reference.levels?.[name]?.args ?? []).some((own) => own.flag === flag && own.value === value));
    return level ?? "full-access";
  };
  const issues: Issue[] = [];
  for (const level of LEVELS) {
    const flags = manifest.levels?.[level];
    if (!flags) continue;
    for (const found of read(flags.args ?? [])) {
      const at = found.grouped ? "full-access" : placed(found.flag, found.value);
      if (levelRank(at) > levelRank(level)) issues.push(above(level, "args", found.text, at, reference));
    }
    for (const [name, value] of Object.entries(flags.env ?? {})) {
      if (!(reference.permission_env ?? []).includes(name)) continue;
      const at = LEVELS.find((other) => reference.levels?.[other]?.env?.[name] === value) ?? "full-access";
      if (levelRank(at) > levelRank(level)) issues.push(above(level, "env", `${name}=${value}`, at, reference));
    }
  }
  return issues;
}

// --- internal ---

function above(level: Level, where: "args" | "env", text: string, at: Level, reference: Manifest): Issue {
  return {
    pointer: `/levels/${level}/${where}`,
    message: `carries "${text}", which uuldana knows as ${reference.id}'s ${at} (its built-in manifest); a level may not carry a higher level's permission`,
    hint: `give ${level} the flags of ${reference.id}'s built-in ${level} level, or leave ${level} out`,
  };
}
