// Whether two single-character parts of patterns (a literal, an escape such as \d, a class such as [^─], or .) can
// match the same character. A literal is tested against the other part; two classes are compared over a sample of
// characters (ASCII, Latin, Greek, Cyrillic, punctuation, symbols, box drawing, arrows, dingbats, full-width forms
// and a few others), which is where the characters of agents' screens come from.

const SYNTAX = "^$\\.*+?()[]{}|/-";

const wholes = new Map<string, RegExp>();
const members = new Map<string, Uint8Array>();
const pairs = new Map<string, boolean>();
let sample: { text: string; index: Int32Array; count: number } | undefined;

// True when some part of one list and some part of the other can match the same character.
export function intersects(a: readonly string[], b: readonly string[]): boolean {
  return a.some((x) => b.some((y) => partsMeet(x, y)));
}

// --- internal ---

function partsMeet(a: string, b: string): boolean {
  const key = a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`;
  let meet = pairs.get(key);
  if (meet === undefined) {
    meet = compare(a, b);
    pairs.set(key, meet);
  }
  return meet;
}

function compare(a: string, b: string): boolean {
  const x = literalOf(a);
  const y = literalOf(b);
  if (x !== undefined && y !== undefined) return x === y;
  if (x !== undefined) return whole(b).test(x);
  if (y !== undefined) return whole(a).test(y);
  const left = membership(a);
  const right = membership(b);
  for (let i = 0; i < left.length; i++) if (left[i] && right[i]) return true;
  return false;
}

// The one character a part stands for, when it is a literal or an escaped syntax character.
function literalOf(part: string): string | undefined {
  if (part === "." || part.startsWith("[")) return undefined;
  if (part.startsWith("\\")) return part.length === 2 && SYNTAX.includes(part[1]!) ? part[1] : undefined;
  return part;
}

function whole(part: string): RegExp {
  let regex = wholes.get(part);
  if (!regex) {
    regex = new RegExp(`^(?:${part})$`, "u");
    wholes.set(part, regex);
  }
  return regex;
}

function membership(part: string): Uint8Array {
  let bits = members.get(part);
  if (bits) return bits;
  const { text, index, count } = (sample ??= buildSample());
  bits = new Uint8Array(count);
  for (const match of text.matchAll(new RegExp(part, "gu"))) bits[index[match.index]!] = 1;
  members.set(part, bits);
  return bits;
}

function buildSample(): { text: string; index: Int32Array; count: number } {
  const points: number[] = [];
  for (let cp = 0; cp < 0x3100; cp++) points.push(cp);
  for (let cp = 0xff00; cp < 0x10000; cp++) points.push(cp);
  points.push(0x4e00, 0x9fa5, 0xac00, 0xd7a3, 0x10000, 0x1f300, 0x1f600, 0x1f916, 0x20000, 0xe0041);
  const text = String.fromCodePoint(...points);
  const index = new Int32Array(text.length);
  let unit = 0;
  points.forEach((cp, i) => {
    index[unit] = i;
    unit += cp > 0xffff ? 2 : 1;
  });
  return { text, index, count: points.length };
}
