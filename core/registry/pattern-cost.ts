import { intersects } from "./pattern-chars.js";
import type { PatternNode } from "./pattern-syntax.js";

// How long a pattern can take on one line, judged from its shape: how many ways its repetitions can share out a
// line's characters, and whether a repeated group can cut the same text two ways. Every bound is for a line of
// LINE_LIMIT characters, the most of a line that is ever matched.

export const LINE_LIMIT = 500;
// the most spellings of a repeated group that are compared
export const SPELLINGS = 256;

// What a part of a pattern can match at one position: the characters it can take, whether it can take none, how
// many lengths it can take (at most LINE_LIMIT + 1), how many steps trying all of it can cost, and the repetitions
// behind that cost.
export interface Summary {
  chars: string[];
  empty: boolean;
  width: number;
  cost: number;
  chain: PatternNode[];
  zeroWidth: boolean;
}

function summarize(node: PatternNode): Summary {
  const base = { chain: [], zeroWidth: false };
  switch (node.type) {
    case "char":
      return { ...base, chars: [node.source], empty: false, width: 1, cost: 1 };
    case "assertion":
      return { ...base, chars: [], empty: true, width: 1, cost: 1, zeroWidth: true };
    case "backreference":
      return { ...base, chars: ["."], empty: true, width: LINE_LIMIT + 1, cost: 1 };
    case "repeat": {
      const body = summarize(node.node);
      const span = Math.min(node.max, LINE_LIMIT) - node.min;
      const width = span < 0 ? 1 : Math.min(LINE_LIMIT + 1, (span + 1) * body.width);
      return { ...body, empty: node.min === 0 || body.empty, width, zeroWidth: false };
    }
    case "group": {
      const inner = node.branches.map((branch) => summarizeSequence(branch));
      const costly = inner.reduce((a, b) => (b.cost > a.cost ? b : a));
      const cost = inner.reduce((sum, s) => sum + s.cost, 0);
      if (node.kind === "lookahead" || node.kind === "lookbehind") {
        return { chars: [], empty: true, width: 1, cost, chain: costly.chain, zeroWidth: true };
      }
      return {
        chars: inner.flatMap((s) => s.chars),
        empty: inner.some((s) => s.empty),
        width: Math.min(LINE_LIMIT + 1, inner.reduce((sum, s) => sum + s.width, 0)),
        cost,
        chain: costly.chain,
        zeroWidth: false,
      };
    }
  }
}

// A sequence's cost: repetitions that can take the same characters in turn, with nothing between them that stops
// the trade, multiply their widths; a lookaround multiplies by what it costs at each position. A repetition that
// ends the whole pattern is never backtracked into: once it has matched, so has the pattern.
export function summarizeSequence(nodes: PatternNode[], endsPattern = false): Summary {
  const parts = nodes.map(summarize);
  const last = parts.length - 1;
  if (endsPattern && nodes[last]?.type === "repeat") parts[last] = { ...parts[last]!, width: 1 };
  const best: { steps: number; chain: PatternNode[] }[] = [];
  let chained = { steps: 1, chain: [] as PatternNode[] };
  let inner = { cost: 1, chain: [] as PatternNode[] };
  let around = { cost: 1, chain: [] as PatternNode[] };
  parts.forEach((part, j) => {
    if (part.zeroWidth && part.cost > around.cost) around = part;
    else if (!part.zeroWidth && part.cost > inner.cost) inner = part;
    best[j] = { steps: 1, chain: [] };
    if (part.width <= 1) return;
    let before = { steps: 1, chain: [] as PatternNode[] };
    for (let i = 0; i < j; i++) {
      if (best[i]!.steps > before.steps && linked(parts, i, j)) before = best[i]!;
    }
    best[j] = { steps: before.steps * part.width, chain: [...before.chain, nodes[j]!] };
    if (best[j]!.steps > chained.steps) chained = best[j]!;
  });
  const worst = chained.steps >= inner.cost ? chained : { steps: inner.cost, chain: inner.chain };
  return {
    chars: parts.filter((p) => !p.zeroWidth).flatMap((p) => p.chars),
    empty: parts.every((p) => p.empty),
    width: Math.min(LINE_LIMIT + 1, parts.reduce((product, p) => product * p.width, 1)),
    cost: worst.steps * around.cost,
    chain: [...worst.chain, ...around.chain],
    zeroWidth: false,
  };
}

// Two repetitions of a sequence trade characters when they share some and what stands between them either can match
// nothing or takes characters both of them take.
function linked(parts: Summary[], i: number, j: number): boolean {
  const a = parts[i]!;
  const b = parts[j]!;
  if (!intersects(a.chars, b.chars)) return false;
  for (let k = i + 1; k < j; k++) {
    const between = parts[k]!;
    if (!between.empty && !(intersects(between.chars, a.chars) && intersects(between.chars, b.chars))) return false;
  }
  return true;
}

// Whether a repeated group's spellings can cut one run of text into repetitions in two ways (the Sardinas–Patterson
// test, with characters that can be alike counted as alike), or undefined when it has too many spellings to tell.
export function cutTwoWays(body: PatternNode): boolean | undefined {
  if (body.type !== "group") return false;
  const words = spellings([body])?.filter((word) => word.length > 0);
  if (!words) return undefined;
  const fits = (head: string[], word: string[]): boolean => head.length <= word.length && head.every((atom, k) => intersects([atom], [word[k]!]));
  const seen = new Set<string>();
  const pending: string[][] = [];
  // a dangling rest that is empty means two cuts meet again: the same text, two ways
  const dangle = (rest: string[]): boolean => {
    if (rest.length === 0) return true;
    const key = rest.join("\u0000");
    if (!seen.has(key)) {
      seen.add(key);
      pending.push(rest);
    }
    return false;
  };
  for (const [i, head] of words.entries()) {
    for (const [j, word] of words.entries()) if (i !== j && fits(head, word) && dangle(word.slice(head.length))) return true;
  }
  while (pending.length > 0) {
    if (seen.size > SPELLINGS * 16) return undefined;
    const rest = pending.pop()!;
    for (const word of words) {
      if (fits(rest, word) && dangle(word.slice(rest.length))) return true;
      if (fits(word, rest) && dangle(rest.slice(word.length))) return true;
    }
  }
  return false;
}

// Every way a part of a pattern without unbounded repetition can be spelt, as its characters in order; undefined
// past SPELLINGS.
function spellings(nodes: PatternNode[]): string[][] | undefined {
  let words: string[][] = [[]];
  for (const node of nodes) {
    const options = spellingsOf(node);
    if (!options) return undefined;
    const next: string[][] = [];
    for (const word of words) for (const option of options) next.push([...word, ...option]);
    if (next.length > SPELLINGS) return undefined;
    words = next;
  }
  return words;
}

function spellingsOf(node: PatternNode): string[][] | undefined {
  switch (node.type) {
    case "char":
      return [[node.source]];
    case "assertion":
      return [[]];
    case "backreference":
      return undefined;
    case "group": {
      if (node.kind === "lookahead" || node.kind === "lookbehind") return [[]];
      const options: string[][] = [];
      for (const branch of node.branches) {
        const inner = spellings(branch);
        if (!inner || options.length + inner.length > SPELLINGS) return undefined;
        options.push(...inner);
      }
      return options;
    }
    case "repeat": {
      if (node.max - node.min >= SPELLINGS) return undefined;
      const options: string[][] = [];
      for (let count = node.min; count <= node.max; count++) {
        const inner = spellings(Array<PatternNode>(count).fill(node.node));
        if (!inner || options.length + inner.length > SPELLINGS) return undefined;
        options.push(...inner);
      }
      return options;
    }
  }
}
