import type { Verdict } from "./reader.js";

// Who is speaking: a line the agent's assistant wrote (its answer explaining a limit error, a tool's output it
// quotes) is not the agent's own system telling the user the allowance is gone, whatever the words. Weighed, in
// this order of trust: the agent's own records where its adapter reads them, then how and where the line was
// drawn. Pure: the run gathers the facts (see run-detection.ts), this decides, and the verdict keeps the facts it
// used so that explain and report can show them.

// How a line was drawn: the style most of its letters have.
export interface DrawnStyle {
  // null: the terminal's default colour; a number: a palette colour (0-255); a string: "#rrggbb"
  fg: number | string | null;
  bold: boolean;
  dim: boolean;
  inverse: boolean;
}

// How an agent draws its own notices (errors, limits), as its manifest names it (notice_style).
export interface NoticeStyle {
  colors?: readonly (number | string)[];
  bold?: boolean;
  inverse?: boolean;
}

export interface SpeakerFacts {
  drawn?: DrawnStyle;
  // the glyph or frame mark the line begins with ("⎿", "■", "│")
  glyph?: string;
  // the conversation, or the agent's own status and prompt area at the bottom of its screen
  place?: "conversation" | "status";
  // the turn of the agent's own records the text stands in: its assistant's answer, or a tool's output
  record?: "agent" | "tool";
  // the manifest's notice style, when it names one
  notice?: NoticeStyle;
}

// The verdict with who spoke weighed: a stop the facts say the assistant wrote becomes no stop, with the reason.
export function judgeSpeaker(verdict: Verdict, facts: SpeakerFacts): Verdict {
  const judged = { ...verdict, facts: { ...verdict.facts, speaker: facts } };
  if (!verdict.stop) return judged;
  const why = refusal(facts);
  return why ? { ...judged, stop: false, reset_at: null, reasons: [...verdict.reasons, `not a stop: ${why}`] } : judged;
}

// A style as words: "default colour", "colour 1, bold".
export function describeStyle(style: DrawnStyle): string {
  const parts = [style.fg === null ? "default colour" : `colour ${style.fg}`];
  for (const flag of ["bold", "dim", "inverse"] as const) if (style[flag]) parts.push(flag);
  return parts.join(", ");
}

// --- internal ---

// the palette's basic colours and their bright twins draw the same hue: 1 and 9 are both red
const twin = (fg: number | string | null): number | string | null => (typeof fg === "number" && fg >= 8 && fg < 16 ? fg - 8 : fg);

function refusal(facts: SpeakerFacts): string | undefined {
  if (facts.record === "agent") return "the agent's assistant wrote it (its own records hold it in an answer)";
  if (facts.record === "tool") return "a tool's output the agent shows (its own records hold it in a tool result)";
  const { drawn, notice } = facts;
  if (!drawn || !notice || !drawsNotices(notice)) return undefined;
  return matches(drawn, notice) ? undefined : `drawn as the agent's prose (${describeStyle(drawn)}), not as it draws its notices (${describeNotice(notice)})`;
}

function drawsNotices(notice: NoticeStyle): boolean {
  return Boolean(notice.colors?.length || notice.bold || notice.inverse);
}

function matches(drawn: DrawnStyle, notice: NoticeStyle): boolean {
  if (notice.colors?.length && !notice.colors.some((colour) => twin(colour) === twin(drawn.fg) || (typeof colour === "string" && typeof drawn.fg === "string" && colour.toLowerCase() === drawn.fg.toLowerCase()))) return false;
  if (notice.bold && !drawn.bold) return false;
  if (notice.inverse && !drawn.inverse) return false;
  return true;
}

function describeNotice(notice: NoticeStyle): string {
  const parts = notice.colors?.length ? [`colour ${notice.colors.join(" or ")}`] : [];
  if (notice.bold) parts.push("bold");
  if (notice.inverse) parts.push("inverse");
  return parts.join(", ");
}
