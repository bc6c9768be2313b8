import { readGate, type Gate } from "../registry/gate.js";
import type { Manifest } from "../registry/types.js";

// Whether an agent's visible rows stand between it and the work, by its manifest's sign_in and asks lines: a sign-in
// screen, or a question only the user can answer (trusting a folder, first-run choices). Undefined for a manifest
// that names neither.
export function screenGate(manifest: Manifest): ((visible: readonly string[]) => Gate | undefined) | undefined {
  if (!manifest.sign_in?.screen?.length && !manifest.asks?.length) return undefined;
  return (visible) => readGate(visible, manifest);
}
