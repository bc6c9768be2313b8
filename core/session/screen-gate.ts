import { compileLinePatterns } from "../registry/patterns.js";
import type { Manifest } from "../registry/types.js";
import type { ScreenGate } from "./receiver.js";

// Whether an agent's visible rows stand between it and the work, by its manifest's sign_in lines: a sign-in screen,
// or a question only the user can answer (trusting a folder, first-run choices). Undefined for a manifest that names
// neither.
export function screenGate(manifest: Manifest): ((visible: readonly string[]) => ScreenGate | undefined) | undefined {
  const spec = (manifest as { sign_in?: { screen?: string[]; asks?: string[] } }).sign_in;
  if (!spec?.screen?.length && !spec?.asks?.length) return undefined;
  const signIn = compileLinePatterns(spec.screen ?? []);
  const asks = compileLinePatterns(spec.asks ?? []);
  return (visible) => {
    const line = visible.find(signIn);
    if (line) return { kind: "sign-in", line: line.trim() };
    const question = visible.find(asks);
    return question ? { kind: "question", line: question.trim() } : undefined;
  };
}
