// Secrets out of everything a session keeps or hands on: journal, session files, the cooldown table, the next
// agent's prompt. A secret is an entry's env value or a match of one of the config's redact patterns.

export const REDACTED = "[redacted]";

// An env value is a secret unless it could be a switch, a number or a plain word: it is one when it has 20 characters
// or more, or 8 or more that mix letters with digits or hold a symbol (a slash, a dash, a dot, an @…). "true", "auto",
// "main", "1000", "production" and "Jane Smith" stay as they are; keys, tokens and account folders are blanked.
export function isSecretValue(value: string): boolean {
  const length = [...value].length;
  if (length >= 20) return true;
  return length >= 8 && (/[^\p{L}\p{N}\s]/u.test(value) || (/\p{L}/u.test(value) && /\p{N}/u.test(value)));
}

// Built once per session, so the journal, the files, the cooldown row and the prompt blank exactly the same things.
export class Redactor {
  private readonly patterns: RegExp[] = [];
  private readonly literal = new Set<RegExp>();
  private readonly known = new Set<string>();

  constructor(patterns: readonly RegExp[] = [], values: readonly string[] = []) {
    this.add(patterns, values);
  }

  // Secrets learnt later in the session (config.json edited while it runs) are blanked from then on; none is dropped.
  add(patterns: readonly RegExp[], values: readonly string[]): void {
    for (const pattern of patterns) {
      const flags = pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`;
      if (this.learn(`pattern ${flags} ${pattern.source}`)) this.patterns.push(new RegExp(pattern.source, flags));
    }
    for (const value of values) {
      if (!isSecretValue(value) || !this.learn(`value ${value}`)) continue;
      const literal = new RegExp(value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "g");
      this.literal.add(literal);
      this.patterns.push(literal);
    }
  }

  // Every match of a pattern and every literal value becomes [redacted] — also where a line break falls inside
  // it, as when the screen wrapped a long key: the text is searched again with its line breaks taken out.
  redact(text: string): string {
    if (this.patterns.length === 0 || text === "") return text;
    return replaceRanges(text, this.secretRanges(text));
  }

  // Lines redacted as one text, as redact() does, but one line out for each line in: the part of a secret on each
  // line it was wrapped over becomes [redacted] on that line. For lines kept as lines (the lines an agent drew).
  redactLines(lines: readonly string[]): string[] {
    const text = lines.join("\n");
    if (this.patterns.length === 0 || text === "") return [...lines];
    return replaceRanges(text, this.secretRanges(text), true).split("\n");
  }

  private secretRanges(text: string): [number, number][] {
    const ranges: [number, number][] = [];
    for (const pattern of this.patterns) {
      for (const match of text.matchAll(pattern)) if (match[0]) ranges.push([match.index, match.index + match[0].length]);
    }
    if (text.includes("\n")) {
      const { joined, origin, cuts } = unwrap(text);
      for (const pattern of this.patterns) {
        for (const match of joined.matchAll(pattern)) {
          const start = match.index;
          const end = start + match[0].length;
          const cut = firstCutWithin(cuts, start, end);
          // a literal value is the same secret wherever it breaks; a pattern's open end could run on into the next
          // line's first word, so it goes on only into what looks like the rest of a key
          if (!match[0] || (cut !== undefined && !this.literal.has(pattern) && isWord(joined.slice(cut, end)))) continue;
          ranges.push([origin[start]!, origin[end - 1]! + 1]);
        }
      }
    }
    return ranges;
  }

  private learn(key: string): boolean {
    if (this.known.has(key)) return false;
    this.known.add(key);
    return true;
  }
}

// What a config holds that is secret: its redact patterns, the env values of every entry the user wrote (also those a
// project's config left out: their keys may still be in the environment an agent sees) and of the entries it runs.
export interface SecretSource {
  redact: readonly RegExp[];
  entries: readonly { env: Readonly<Record<string, string>>; args?: readonly string[] }[];
  secrets?: readonly string[];
}

// The values an entry's args hand its CLI as credentials: what follows a flag named for a key, token, secret or
// password (--api-key sk-…, --api-key=openai=sk-…, --token …).
export function credentialArgs(args: readonly string[]): string[] {
  const values: string[] = [];
  const named = (flag: string): boolean => /^--?[\w-]*(?:key|token|secret|passw(?:or)?d|credential)s?$/i.test(flag);
  args.forEach((arg, i) => {
    const equals = arg.indexOf("=");
    if (arg.startsWith("-") && equals !== -1 && named(arg.slice(0, equals))) values.push(arg.slice(equals + 1));
    else if (named(arg) && args[i + 1] !== undefined && !args[i + 1]!.startsWith("-")) values.push(args[i + 1]!);
  });
  return values;
}

// The redactor of a session, from its config.
export function redactorFor(config: SecretSource): Redactor {
  return addSecrets(new Redactor(), config);
}

// A config read again during the session adds its new secrets to the session's redactor.
export function addSecrets(redactor: Redactor, config: SecretSource): Redactor {
  redactor.add(config.redact, [...(config.secrets ?? []), ...config.entries.flatMap((entry) => [...Object.values(entry.env), ...credentialArgs(entry.args ?? [])])]);
  return redactor;
}

// --- internal ---

// The text without the line breaks a terminal or an agent made wrapping a long line, where each character came from,
// and where in it each break was taken out.
function unwrap(text: string): { joined: string; origin: Int32Array; cuts: number[] } {
  const origin = new Int32Array(text.length);
  const cuts: number[] = [];
  const kept: string[] = [];
  let length = 0;
  let from = 0;
  const keep = (end: number): void => {
    for (let i = from; i < end; i++) origin[length + i - from] = i;
    kept.push(text.slice(from, end));
    length += end - from;
  };
  for (const [start, end] of wrapBreaks(text)) {
    keep(start);
    cuts.push(length);
    from = end;
  }
  keep(text.length);
  return { joined: kept.join(""), origin, cuts };
}

// Each line break with the blanks and a panel's side border on either side of it, but never one next to a blank line
// (a paragraph ends there). One pass: a run of blanks is walked once, however long, so hostile text cannot stall it.
function wrapBreaks(text: string): [number, number][] {
  const breaks: [number, number][] = [];
  let after = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) {
    let start = at > after && text[at - 1] === "\r" ? at - 1 : at;
    while (start > after && isBlank(text.charCodeAt(start - 1))) start--;
    // the line before holds only blanks
    if (start > 0 && (text[start - 1] === "\n" || text[start - 1] === "\r")) continue;
    let end = at + 1;
    while (end < text.length && isBlank(text.charCodeAt(end))) end++;
    // the line after holds only blanks
    if (text[end] === "\n" || (text[end] === "\r" && text[end + 1] === "\n")) continue;
    breaks.push([start, end]);
    after = end;
  }
  return breaks;
}

// A blank, a tab or a panel's side border (│ ┃ ║).
function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x2502 || code === 0x2503 || code === 0x2551;
}

// The first of the (ascending) cuts strictly inside start..end, found by halving.
function firstCutWithin(cuts: readonly number[], start: number, end: number): number | undefined {
  let low = 0;
  let high = cuts.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (cuts[middle]! <= start) low = middle + 1;
    else high = middle;
  }
  return low < cuts.length && cuts[low]! < end ? cuts[low] : undefined;
}

// A plain word ("three", "Next", "README"), not the rest of a key (which holds digits, mixes cases or runs long).
function isWord(text: string): boolean {
  return text.length < 16 && /^(?:[a-z]+|[A-Z][a-z]*|[A-Z]+)$/.test(text);
}

// Each range becomes [redacted]; with keepBreaks, a range over several lines becomes [redacted] on each of them.
function replaceRanges(text: string, ranges: [number, number][], keepBreaks = false): string {
  if (ranges.length === 0) return text;
  const blank = (from: number, to: number): string => (keepBreaks ? text.slice(from, to).split("\n").map(() => REDACTED).join("\n") : REDACTED);
  ranges.sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let out = "";
  let at = 0;
  let open: [number, number] | undefined;
  for (const range of ranges) {
    if (open && range[0] <= open[1]) {
      open[1] = Math.max(open[1], range[1]);
      continue;
    }
    if (open) {
      out += text.slice(at, open[0]) + blank(open[0], open[1]);
      at = open[1];
    }
    open = [range[0], range[1]];
  }
  out += text.slice(at, open![0]) + blank(open![0], open![1]) + text.slice(open![1]);
  return out;
}
