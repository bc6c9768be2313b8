import { cutTwoWays, LINE_LIMIT, SPELLINGS, summarizeSequence } from "./pattern-cost.js";
import { childrenOf, parsePattern, type PatternNode } from "./pattern-syntax.js";

export { LINE_LIMIT };

// A manifest's line patterns (chrome, busy) come from drop-ins and packs and run on the output path, so each must be
// quick on any line: lines are matched on at most their first LINE_LIMIT characters, and a pattern is refused when
// it loads if it could backtrack for long there — nested repetition, a repeated group that can cut the same text
// two ways, backreferences, lookbehind of unbounded length, or repetitions that can share out the same characters
// in more than STEP_LIMIT ways (about half a millisecond on a full line).

const STEP_LIMIT = 300_000;

// What the manifest check says is allowed, for every refused line pattern.
export const LINE_PATTERN_ALLOWED = `a JavaScript regular expression (read with the u flag) that cannot backtrack for long on a line of ${LINE_LIMIT} characters`;

// Why a line pattern is refused and, for the refusals a schema description cannot explain, how to fix it.
export interface PatternProblem {
  message: string;
  hint?: string;
}

// One test of a line against all the patterns of a field.
export type LineMatcher = (line: string) => boolean;

// The manifest check for one line pattern: undefined when it compiles and cannot backtrack for long. Judged once per
// pattern in a process: the manifests are read again at each start of a session.
export function checkLinePattern(pattern: string): PatternProblem | undefined {
  if (!checked.has(pattern)) checked.set(pattern, judgePattern(pattern));
  return checked.get(pattern);
}

// Why a line pattern does not compile, if it does not.
export function compileProblem(pattern: string): PatternProblem | undefined {
  try {
    new RegExp(pattern, "u");
    return undefined;
  } catch (error) {
    return { message: `is not a valid regular expression (${(error as Error).message.replace(/^Invalid regular expression: /, "")})` };
  }
}

const checked = new Map<string, PatternProblem | undefined>();

function judgePattern(pattern: string): PatternProblem | undefined {
  try {
    new RegExp(pattern, "u");
  } catch (error) {
    return { message: `is not a valid regular expression (${(error as Error).message.replace(/^Invalid regular expression: /, "")})` };
  }
  const branches = parsePattern(pattern);
  const nodes = branches.flat();
  const shown = (node: PatternNode): string => `"${pattern.slice(node.start, node.end)}"`;

  const reference = find(nodes, (node) => node.type === "backreference");
  if (reference) {
    return {
      message: `refers back to what a group matched (${shown(reference)}), which has no bound on how long it takes`,
      hint: "write the text out again instead of referring back to it",
    };
  }
  const nested = find(nodes, (node) => node.type === "repeat" && node.max > 1 && find(childrenOf(node), isUnbounded) !== undefined);
  if (nested) {
    return {
      message: `repeats a group that itself repeats (${shown(nested)}), which can backtrack without end on a line that almost matches`,
      hint: 'repeat only one of the two: "(?:ab)+" or "a+b+" instead of "(a+b)+", "a+" instead of "(a+)+"',
    };
  }
  const behind = find(nodes, (node) => node.type === "group" && node.kind === "lookbehind" && find(childrenOf(node), isUnbounded) !== undefined);
  if (behind) {
    return {
      message: `looks behind for text of unbounded length (${shown(behind)}), which is read again at every position of the line`,
      hint: 'bound the repetition inside the lookbehind ("{0,20}" instead of "*" or "+"), or match that text itself',
    };
  }
  const alike = find(nodes, (node) => node.type === "repeat" && node.max > 1 && cutTwoWays(node.node) !== false);
  if (alike && alike.type === "repeat" && cutTwoWays(alike.node) === undefined) {
    return {
      message: `repeats a group that can be spelt in more than ${SPELLINGS} ways (${shown(alike)}), too many to tell whether it can backtrack without end`,
      hint: "repeat a simpler group, or a character class",
    };
  }
  if (alike) {
    return {
      message: `repeats a group that can cut the same text into repetitions in more than one way (${shown(alike)}), which can backtrack without end on a line that almost matches`,
      hint: 'let each repetition begin in its own way: "(?:a|b)+" instead of "(?:a|b|ab)+", "a+" instead of "(?:a{1,3})+", "[\\w-]+" instead of "(?:\\w|_|-)+"',
    };
  }
  let steps = 0;
  let chain: PatternNode[] = [];
  for (const branch of branches) {
    const summary = summarizeSequence(branch, true);
    const anchored = branch[0]?.type === "assertion" && branch[0].source === "^";
    steps += summary.cost * (anchored ? 1 : LINE_LIMIT);
    if (summary.chain.length > chain.length) chain = summary.chain;
  }
  if (steps > STEP_LIMIT) {
    return {
      message: `has repetitions that can share out the same characters (${chain.map(shown).join(", ")}), which can take about ${formatSteps(steps)} steps on a ${LINE_LIMIT}-character line`,
      hint: 'put a character between them that they cannot both match, drop one (a ".*" at either end adds nothing: a pattern matches anywhere in the line), or anchor the pattern with ^',
    };
  }
  return undefined;
}

// Compiles a field's checked patterns into one test of a line's first LINE_LIMIT characters.
export function compileLinePatterns(patterns: readonly string[]): LineMatcher {
  if (patterns.length === 0) return () => false;
  for (const pattern of patterns) {
    const problem = checkLinePattern(pattern);
    if (problem) throw new Error(`the line pattern "${pattern}" ${problem.message}`);
  }
  const regex = new RegExp(patterns.map((pattern) => `(?:${withoutCaptures(pattern)})`).join("|"), "u");
  return (line) => regex.test(line.length > LINE_LIMIT ? line.slice(0, LINE_LIMIT) : line);
}

// --- internal ---

function find(nodes: PatternNode[], test: (node: PatternNode) => boolean): PatternNode | undefined {
  for (const node of nodes) {
    const below = find(childrenOf(node), test);
    if (below) return below;
    if (test(node)) return node;
  }
  return undefined;
}

function isUnbounded(node: PatternNode): boolean {
  return node.type === "repeat" && node.max === Infinity;
}

// The pattern with its capturing groups made plain, so patterns joined into one expression cannot clash by name.
function withoutCaptures(pattern: string): string {
  const groups: { start: number; opener: number }[] = [];
  const walk = (nodes: PatternNode[]): void => {
    for (const node of nodes) {
      if (node.type === "group" && node.kind === "capture") groups.push(node);
      walk(childrenOf(node));
    }
  };
  walk(parsePattern(pattern).flat());
  let text = pattern;
  for (const group of groups.sort((a, b) => b.start - a.start)) {
    text = text.slice(0, group.start) + "(?:" + text.slice(group.start + group.opener);
  }
  return text;
}

function formatSteps(steps: number): string {
  if (steps >= 1e15) return "more than a thousand trillion";
  const [size, word] = steps >= 1e12 ? [1e12, "trillion"] : steps >= 1e9 ? [1e9, "billion"] : steps >= 1e6 ? [1e6, "million"] : [1e3, "thousand"];
  return `${Math.round(steps / size)} ${word}`;
}
