// The shape of a regular expression, enough to judge how long it can take: characters, groups, repetitions,
// assertions and backreferences, each with where it stands in the source. The source is read with the u flag and
// must already compile; anything this reader does not know is read as one character, which only makes it stricter.

export type PatternNode =
  | { type: "char"; source: string; start: number; end: number }
  | { type: "assertion"; source: string; start: number; end: number }
  | { type: "backreference"; source: string; start: number; end: number }
  | { type: "group"; kind: GroupKind; branches: PatternNode[][]; start: number; end: number; opener: number }
  | { type: "repeat"; node: PatternNode; min: number; max: number; start: number; end: number };

export type GroupKind = "capture" | "plain" | "lookahead" | "lookbehind";

// Reads a pattern that compiles with the u flag into its alternatives, each a sequence of nodes.
export function parsePattern(source: string): PatternNode[][] {
  let i = 0;
  const sticky = (regex: RegExp): RegExpExecArray | null => {
    regex.lastIndex = i;
    return regex.exec(source);
  };

  const disjunction = (): PatternNode[][] => {
    const branches: PatternNode[][] = [[]];
    while (i < source.length && source[i] !== ")") {
      if (source[i] === "|") {
        i++;
        branches.push([]);
        continue;
      }
      branches[branches.length - 1]!.push(term());
    }
    return branches;
  };

  const term = (): PatternNode => {
    const start = i;
    const node = atom();
    if (node.type === "assertion" || (node.type === "group" && (node.kind === "lookahead" || node.kind === "lookbehind"))) return node;
    const bounds = quantifier();
    return bounds ? { type: "repeat", node, ...bounds, start, end: i } : node;
  };

  const atom = (): PatternNode => {
    const start = i;
    const char = source[i]!;
    if (char === "^" || char === "$") {
      i++;
      return { type: "assertion", source: char, start, end: i };
    }
    if (char === "(") return group();
    if (char === "[") {
      i++;
      if (source[i] === "^") i++;
      while (i < source.length && source[i] !== "]") i += source[i] === "\\" ? 2 : 1;
      i++;
      return { type: "char", source: source.slice(start, i), start, end: i };
    }
    if (char === "\\") return escape();
    i += (source.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
    return { type: "char", source: source.slice(start, i), start, end: i };
  };

  const group = (): PatternNode => {
    const start = i;
    const head = sticky(/\((?:\?(?::|=|!|<=|<!|<[^>]*>|[a-z-]*:))?/y)![0];
    const kind: GroupKind =
      head === "(" || /^\(\?<[^=!]/.test(head) ? "capture" : head === "(?=" || head === "(?!" ? "lookahead" : head.startsWith("(?<") ? "lookbehind" : "plain";
    i += head.length;
    const branches = disjunction();
    i++;
    return { type: "group", kind, branches, start, end: i, opener: head.length };
  };

  const escape = (): PatternNode => {
    const start = i;
    const next = source[i + 1] ?? "";
    const node = (type: "char" | "assertion" | "backreference"): PatternNode => ({ type, source: source.slice(start, i), start, end: i });
    if (next === "b" || next === "B") {
      i += 2;
      return node("assertion");
    }
    if (/[1-9]/.test(next)) {
      i++;
      i += sticky(/\d+/y)![0].length;
      return node("backreference");
    }
    if (next === "k") {
      i = source.indexOf(">", i) + 1;
      return node("backreference");
    }
    if (next === "p" || next === "P" || (next === "u" && source[i + 2] === "{")) i = source.indexOf("}", i) + 1;
    else if (next === "u") i += 6;
    else if (next === "x") i += 4;
    else if (next === "c") i += 3;
    else i += 2;
    return node("char");
  };

  const quantifier = (): { min: number; max: number } | undefined => {
    const match = sticky(/(?:([*+?])|\{(\d+)(,(\d*))?\})\??/y);
    if (!match) return undefined;
    i += match[0].length;
    if (match[1] === "*") return { min: 0, max: Infinity };
    if (match[1] === "+") return { min: 1, max: Infinity };
    if (match[1] === "?") return { min: 0, max: 1 };
    const min = Number(match[2]);
    return { min, max: match[3] === undefined ? min : match[4] ? Number(match[4]) : Infinity };
  };

  return disjunction();
}

// The nodes below a node (a group's branches, a repetition's body), for walking the tree.
export function childrenOf(node: PatternNode): PatternNode[] {
  if (node.type === "group") return node.branches.flat();
  if (node.type === "repeat") return [node.node];
  return [];
}
