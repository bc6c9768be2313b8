import { compileLinePatterns, type LineMatcher } from "./patterns.js";
import type { Manifest } from "./types.js";

// A gate: a screen at which the CLI holds its user before it works. Either it waits for a sign-in (its manifest's
// sign_in.screen) or it asks something else first (its asks: trust this folder, a first-run choice). Pure: read from
// the visible rows, with the manifest's patterns compiled once per manifest object.

export type Gate = { kind: "sign-in"; line: string } | { kind: "question"; line: string };

interface GateMatchers {
  signIn: LineMatcher;
  question: LineMatcher;
}

const compiled = new WeakMap<object, GateMatchers>();

// The frame a dialog's line is drawn in, and the blanks around it, left off the line a gate is told by.
const FRAME = /^[\s│┃║]+|[\s│┃║]+$/gu;

// Whether the visible rows show a sign-in screen or a question screen, and the first line that says so; a sign-in
// line wins over a question line on the same screen, since the user must sign in either way.
export function readGate(visible: readonly string[], manifest: Pick<Manifest, "sign_in" | "asks">): Gate | undefined {
  const { signIn, question } = matchersOf(manifest);
  const signInLine = visible.find(signIn);
  if (signInLine !== undefined) return { kind: "sign-in", line: signInLine.replace(FRAME, "") };
  const questionLine = visible.find(question);
  if (questionLine !== undefined) return { kind: "question", line: questionLine.replace(FRAME, "") };
  return undefined;
}

// --- internal ---

function matchersOf(manifest: Pick<Manifest, "sign_in" | "asks">): GateMatchers {
  let matchers = compiled.get(manifest);
  if (!matchers) {
    matchers = { signIn: compileLinePatterns(manifest.sign_in?.screen ?? []), question: compileLinePatterns(manifest.asks ?? []) };
    compiled.set(manifest, matchers);
  }
  return matchers;
}
