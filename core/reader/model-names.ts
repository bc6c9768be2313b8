// How the reader tells that a text names a model. It keeps no agent's names: a model is told by shape (a word and
// a version-like part: nova-5.1, lyra-2.5-pro, x3-mini, acme-lyra-4), by the word "model", and by the bare names it
// is given (the known agents' manifests list them in models.names).

export interface ModelPatterns {
  // a model's name, as regular-expression source (case-insensitive, u flag)
  name: string;
  // a limit that is one model's: a name by shape or the word "model" anywhere, or a bare name that names the
  // allowance ("your Lyra limit", "Lyra 4 usage limit") — a bare name may also be a plan's or a speed's ("Pro",
  // "Flash"), and is not taken for a model elsewhere
  perModel: RegExp;
}

// A word and a version-like part, joined by hyphens: the word ends in digits (x3-mini, lyra3-coder) or one of the
// parts begins with one (nova-5.1, lyra-2.5-pro, acme-lyra-4) — an identifier's random letters and digits
// (org-x9Lk2b) do not.
// (\b first: only the beginnings of words are looked behind, which keeps it cheap on every line an agent draws)
const SHAPE = String.raw`\b(?<![.-])[a-z]+(?:\d+(?:\.\d+)*(?:-[a-z\d][\w.]*)+|(?:-[a-z]+)*-\d[\w.]*(?:-[a-z\d][\w.]*)*)\b`;

// Names that pick no particular model (the agent's default, its own choice) say nothing of one model's limit.
const CHOOSES_NONE = /^(?:default|auto)$/i;

const cache = new WeakMap<readonly string[], ModelPatterns>();
const NO_NAMES: readonly string[] = Object.freeze([]);

// The patterns for the model names given (cached per list, as the reader runs on every line an agent draws).
export function modelPatterns(names: readonly string[] = NO_NAMES): ModelPatterns {
  const known = cache.get(names);
  if (known) return known;
  const bare = [...new Set(names.map((name) => name.trim().toLowerCase()))]
    .filter((name) => name && !CHOOSES_NONE.test(name))
    .sort((a, b) => b.length - a.length)
    .map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const named = bare.length ? `(?<!\\w)(?:${bare.join("|")})(?!\\w)` : undefined;
  const name = [String.raw`\bmodel\b`, SHAPE, ...(named ? [named] : [])].join("|");
  const limit = String.raw`(?:\s+\d[\w.]*)?\s+(?:usage\s+)?(?:limit|quota)s?\b`;
  // "Opus limit", and a family of models by a known name ("all Pro models")
  const perModel = new RegExp([String.raw`\bmodel\b`, SHAPE, ...(named ? [`${named}${limit}`, `${named}\\s+models\\b`] : [])].join("|"), "iu");
  const patterns = { name, perModel };
  cache.set(names, patterns);
  return patterns;
}
