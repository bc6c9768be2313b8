// What an agent drew, kept for the session's report: the last lines of the run, and the lines around each candidate
// the detector saw (the lines before it, its own, and those drawn after it until its outcome). Lines are kept as the
// screen model handed them to the detector and redacted only as they are handed out, together with a few lines on
// either side, so that a secret the screen wrapped across the edge of what is handed out is blanked too.

// the most lines, and bytes, of a run's tail
export const TAIL_LINES = 500;
export const TAIL_BYTES = 256 * 1024;
// the most lines kept before a candidate, of its own, and after it
export const WINDOW_LINES = 20;
// the most characters of one line handed out
export const LINE_CHARS = 1000;
// lines redacted with what is handed out and then left out of it
const CONTEXT = 4;
// the most characters of one line held (a row is as wide as the terminal): more than is handed out, so a secret that
// begins before LINE_CHARS is whole when it is redacted
const HELD_CHARS = 4 * LINE_CHARS;
// where a candidate's text is looked for: its first and last lines are matched by their letters and digits
const KEY_CHARS = 40;
const MIN_OVERLAP = 8;

// The lines around a candidate as handed out at each step: before and its own lines when it is seen, after at its
// outcome (what it left empty is empty).
export interface DrawnAround {
  before: string[];
  lines: string[];
  after: string[];
}

export class DrawnLines {
  // the last lines drawn, as drawn (within HELD_CHARS)
  private held: string[] = [];
  // while a candidate waits for its outcome: its last lines (for the redaction of what follows) and what was drawn after it
  private open: { context: string[]; after: string[] } | undefined;

  constructor(private readonly redact: (lines: readonly string[]) => string[] = (lines) => [...lines]) {}

  // One batch of lines the agent drew.
  add(lines: readonly string[]): void {
    for (const raw of lines) {
      const line = raw.length > HELD_CHARS ? raw.slice(0, HELD_CHARS) : raw;
      this.held.push(line);
      if (this.open && this.open.after.length < WINDOW_LINES + CONTEXT) this.open.after.push(line);
    }
    if (this.held.length > 2 * (TAIL_LINES + CONTEXT)) this.held.splice(0, this.held.length - (TAIL_LINES + CONTEXT));
  }

  // A candidate was seen in the last batch (of batchSize lines): the lines drawn before it and its own lines, found
  // by its text; when its text is not found among them, its own lines are left empty and before ends with the batch.
  candidate(text: string, batchSize: number): DrawnAround {
    const held = this.held;
    const from = Math.max(0, held.length - batchSize);
    const found = locate(held, from, text);
    const first = found?.first ?? held.length;
    const last = found ? Math.min(found.last, first + WINDOW_LINES - 1) : held.length - 1;
    const start = Math.max(0, first - WINDOW_LINES);
    const low = Math.max(0, start - CONTEXT);
    const high = Math.min(held.length, last + 1 + CONTEXT);
    const redacted = this.redact(held.slice(low, high));
    this.open = { context: held.slice(Math.max(0, last + 1 - CONTEXT), last + 1), after: held.slice(last + 1, last + 1 + WINDOW_LINES + CONTEXT) };
    return {
      before: redacted.slice(start - low, first - low).map(cut),
      lines: redacted.slice(first - low, last + 1 - low).map(cut),
      after: [],
    };
  }

  // The candidate's outcome: the lines drawn after it until now.
  outcome(): DrawnAround {
    const open = this.open;
    this.open = undefined;
    if (!open) return { before: [], lines: [], after: [] };
    const redacted = this.redact([...open.context, ...open.after]);
    return { before: [], lines: [], after: redacted.slice(open.context.length, open.context.length + WINDOW_LINES).map(cut) };
  }

  // The run's last lines, redacted: at most TAIL_LINES lines and TAIL_BYTES bytes (UTF-8), each at most LINE_CHARS.
  tail(): string[] {
    const held = this.held.slice(-(TAIL_LINES + CONTEXT));
    const lines = this.redact(held)
      .slice(-TAIL_LINES)
      .map(cut);
    let bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
    let drop = 0;
    while (bytes > TAIL_BYTES && drop < lines.length) bytes -= Buffer.byteLength(lines[drop++]!) + 1;
    return lines.slice(drop);
  }
}

// --- internal ---

// Where a candidate's text stands among the held lines from `from` on: its last line (the nearest to the end that
// holds the end of the text) and its first. The reader's text is cleaned (markers and borders off, blanks tidied)
// and may begin inside a row, so rows are compared by their letters and digits only.
function locate(held: readonly string[], from: number, text: string): { first: number; last: number } | undefined {
  const keys = text.split("\n").map(key).filter(Boolean);
  if (keys.length === 0) return undefined;
  const firstKey = keys[0]!;
  const lastKey = keys.at(-1)!;
  let last = -1;
  for (let i = held.length - 1; i >= from && last === -1; i--) if (endsText(key(held[i]!), lastKey)) last = i;
  if (last === -1) return undefined;
  if (keys.length === 1 && key(held[last]!).includes(firstKey.slice(0, KEY_CHARS))) return { first: last, last };
  // the text's lines are the rows it came from, less blank ones and the user's own: a few more rows may lie between
  const bound = Math.max(from, last - keys.length - WINDOW_LINES);
  for (let i = keys.length === 1 ? last : last - 1; i >= bound; i--) if (beginsText(key(held[i]!), firstKey)) return { first: i, last };
  return { first: Math.max(from, last - keys.length + 1), last };
}

// a row that holds the end of the text's last line (a row of its own, or the last of several it was wrapped over)
function endsText(row: string, lastKey: string): boolean {
  if (row.length === 0) return false;
  return row.includes(lastKey.slice(-KEY_CHARS)) || (row.length >= MIN_OVERLAP && lastKey.endsWith(row));
}

// a row where the text's first line begins (the text may begin inside it, and go on into the next rows)
function beginsText(row: string, firstKey: string): boolean {
  if (row.includes(firstKey.slice(0, KEY_CHARS))) return true;
  for (let k = Math.min(row.length, firstKey.length, KEY_CHARS); k >= MIN_OVERLAP; k--) if (row.endsWith(firstKey.slice(0, k))) return true;
  return false;
}

// A line's letters and digits, in lower case.
function key(line: string): string {
  return line.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
}

// A line as handed out: at most LINE_CHARS characters, a cut one ending in "…".
function cut(line: string): string {
  if (line.length <= LINE_CHARS) return line;
  const chars = [...line];
  return chars.length <= LINE_CHARS ? line : chars.slice(0, LINE_CHARS).join("") + "…";
}
