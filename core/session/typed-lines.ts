import type { Turn } from "../registry/adapter.js";
import { compact, findShowings, squeezeBlanks } from "./conversation.js";

// The lines the user typed in a run, as a floor for its part of the handoff: each of them is there once, in order —
// where the transcript or the screen holds it, else inserted at its place as a user turn — and a line says so where
// the part holds no answer to one.

// One thing said in a run: a turn from its transcript or a line the user typed (with a note under it), or lines of
// its screen (which tell no speaker).
export type Said = { role: Turn["role"]; text: string; note?: string } | { role: "screen"; lines: string[]; fillIn: boolean };

// Where the user's last request stood in the conversation: it is quoted at the top, once.
export const REQUEST_MARK = "(the user's last request, quoted at the top)";

export interface Placing {
  // the lines the user typed in the run, in order, each with letters or digits
  typed: readonly string[];
  // the one of them the preamble quotes: the mark stands in its place
  request: number | undefined;
  // the line under a typed turn the part holds no answer to
  note: string;
  // the part ends where the run was stopped: the answer to its last turn was the message that stopped it
  stopped: boolean;
}

// A run's part with every line the user typed in it, once and in order: matched (by letters and digits, in order) to
// the part's user turns and its screen's showings of them, so that as many as can be are found; one not found is
// inserted as a user turn before the next one found, or at the end. A typed turn that was inserted, or that no text
// follows before the next user turn (or before the part's end, unless the run was stopped there), gets the note.
export function placeTyped(said: readonly Said[], placing: Placing): Said[] {
  if (placing.typed.length === 0) return [...said];
  const slots = slotsOf(said, placing.typed);
  const at = align(placing.typed.map(compact), slots);
  const plan: Plan = { ...placing, slots, holds: new Map(), before: new Map(), unanswered: new Set() };
  let next: number | undefined;
  for (let index = at.length - 1; index >= 0; index--) {
    const slot = at[index];
    if (slot === undefined) {
      plan.before.set(next ?? END, [index, ...(plan.before.get(next ?? END) ?? [])]);
      plan.unanswered.add(index);
      continue;
    }
    plan.holds.set(slot, index);
    const answer = answerAfter(said, slots[slot]!, next === undefined ? undefined : slots[next]);
    if (answer === false || (answer === undefined && !placing.stopped)) plan.unanswered.add(index);
    next = slot;
  }
  return build(said, plan);
}

// --- internal ---

// A place a typed line may stand: a user turn of the transcript (all of it), or a showing on a screen's lines.
interface Slot {
  item: number;
  start: number;
  end: number;
  text: string;
  cut: boolean;
}

interface Plan extends Placing {
  slots: Slot[];
  // the typed line each slot holds
  holds: Map<number, number>;
  // the typed lines inserted before a slot, or at the end
  before: Map<number, number[]>;
  unanswered: Set<number>;
}

const END = -1;
// The most cells the alignment of typed lines and slots takes; past it, each line takes the first slot that fits.
const MAX_CELLS = 4_000_000;

function slotsOf(said: readonly Said[], typed: readonly string[]): Slot[] {
  const slots: Slot[] = [];
  for (const [item, one] of said.entries()) {
    if (one.role === "user") slots.push({ item, start: 0, end: 0, text: compact(one.text), cut: false });
    else if (one.role === "screen") for (const shown of findShowings(one.lines, typed)) slots.push({ item, ...shown });
  }
  return slots;
}

// Whether a slot holds a typed line, by its letters: all of them, or the beginning an echo cut short kept.
function fits(slot: Slot, text: string): boolean {
  return slot.cut ? text.length > slot.text.length && text.startsWith(slot.text) : text === slot.text;
}

// The slot of each typed line, or undefined: the most lines matched to slots in order (a longest common
// subsequence), each as early as that allows; two lines are never placed on overlapping lines of one screen.
function align(texts: readonly string[], slots: readonly Slot[]): (number | undefined)[] {
  const rows = texts.length;
  const width = slots.length + 1;
  if (rows * width > MAX_CELLS) return overlapsDropped(firstFits(texts, slots), slots);
  // best[i * width + j]: how many of the lines from i can be matched to the slots from j
  const best = new Int32Array((rows + 1) * width);
  for (let i = rows - 1; i >= 0; i--) {
    for (let j = slots.length - 1; j >= 0; j--) {
      best[i * width + j] = fits(slots[j]!, texts[i]!) ? best[(i + 1) * width + j + 1]! + 1 : Math.max(best[(i + 1) * width + j]!, best[i * width + j + 1]!);
    }
  }
  const at: (number | undefined)[] = texts.map(() => undefined);
  for (let i = 0, j = 0; i < rows && j < slots.length; ) {
    if (fits(slots[j]!, texts[i]!)) at[i++] = j++;
    else if (best[i * width + j + 1]! >= best[(i + 1) * width + j]!) j++;
    else i++;
  }
  return overlapsDropped(at, slots);
}

// Too many lines and slots to align: each line takes the first slot after the last one taken that fits it.
function firstFits(texts: readonly string[], slots: readonly Slot[]): (number | undefined)[] {
  let from = 0;
  return texts.map((text) => {
    for (let j = from; j < slots.length; j++) {
      if (!fits(slots[j]!, text)) continue;
      from = j + 1;
      return j;
    }
    return undefined;
  });
}

function overlapsDropped(at: (number | undefined)[], slots: readonly Slot[]): (number | undefined)[] {
  let last: Slot | undefined;
  return at.map((j) => {
    const slot = j === undefined ? undefined : slots[j]!;
    if (!slot || (last && slot.item === last.item && slot.start < last.end)) return undefined;
    last = slot;
    return j;
  });
}

// Whether the part holds an answer to a typed turn: words after it, an agent's turn or a tool call, before the next
// user turn (false when none does); undefined when the part ends first.
function answerAfter(said: readonly Said[], from: Slot, until: Slot | undefined): boolean | undefined {
  for (let item = from.item; item < said.length; item++) {
    const one = said[item]!;
    const stop = until?.item === item ? until.start : undefined;
    if (one.role === "screen") {
      const lines = one.lines.slice(item === from.item ? from.end : 0, stop ?? one.lines.length);
      if (lines.some((line) => /[\p{L}\p{N}]/u.test(line))) return true;
    } else if (item !== from.item) return one.role !== "user";
    if (stop !== undefined) return false;
  }
  return undefined;
}

// The part as the plan places the typed lines in it: screens split where a line is inserted, the mark where the
// request stood, the note under each unanswered turn.
function build(said: readonly Said[], plan: Plan): Said[] {
  const out: Said[] = [];
  const insert = (slot: number): void => {
    for (const index of plan.before.get(slot) ?? []) out.push({ role: "user", text: index === plan.request ? REQUEST_MARK : plan.typed[index]!, note: plan.note });
  };
  const placed = [...plan.holds.keys()].sort((a, b) => a - b);
  for (const [item, one] of said.entries()) {
    const mine = placed.filter((slot) => plan.slots[slot]!.item === item);
    if (one.role !== "screen") {
      const slot = mine[0];
      const index = slot === undefined ? undefined : plan.holds.get(slot)!;
      if (slot !== undefined) insert(slot);
      if (index === undefined) out.push(one);
      else out.push({ role: one.role, text: index === plan.request ? REQUEST_MARK : one.text, ...(plan.unanswered.has(index) ? { note: plan.note } : {}) });
      continue;
    }
    let piece: string[] = [];
    let fillIn = one.fillIn;
    const flush = (): void => {
      const lines = squeezeBlanks(piece);
      piece = [];
      if (lines.length === 0) return;
      out.push({ role: "screen", lines, fillIn });
      fillIn = false;
    };
    let from = 0;
    for (const slot of mine) {
      const { start, end } = plan.slots[slot]!;
      const index = plan.holds.get(slot)!;
      piece.push(...one.lines.slice(from, start));
      if (plan.before.has(slot)) {
        flush();
        insert(slot);
      }
      piece.push(...(index === plan.request ? [REQUEST_MARK] : one.lines.slice(start, end)), ...(plan.unanswered.has(index) ? [plan.note] : []));
      from = end;
    }
    piece.push(...one.lines.slice(from));
    flush();
  }
  insert(END);
  return out;
}
