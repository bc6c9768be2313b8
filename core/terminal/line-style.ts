import type { IBufferCell, IBufferLine } from "@xterm/headless";

// How one stretch of a row is drawn: the attributes a reader may weigh (a warning in red, a hint dimmed, a
// selected menu entry in inverse), not every attribute a terminal knows.
export interface StyleRun {
  // the columns it covers, from inclusive, to exclusive
  from: number;
  to: number;
  text: string;
  // null: the terminal's default colour; a number: a palette colour (0-255); a string: a true colour, "#rrggbb"
  fg: number | string | null;
  bold: boolean;
  dim: boolean;
  inverse: boolean;
}

// The row's stretches of one style, left to right, up to its last character (the blanks after it left out).
export function lineStyle(line: IBufferLine, cell: IBufferCell): StyleRun[] {
  const end = lastDrawn(line, cell) + 1;
  const runs: StyleRun[] = [];
  let run: StyleRun | undefined;
  for (let x = 0; x < end; x++) {
    line.getCell(x, cell);
    // the right half of a wide character belongs to the left half's run
    if (cell.getWidth() === 0) {
      if (run) run.to = x + 1;
      continue;
    }
    const fg = colour(cell);
    const bold = cell.isBold() !== 0;
    const dim = cell.isDim() !== 0;
    const inverse = cell.isInverse() !== 0;
    if (!run || run.fg !== fg || run.bold !== bold || run.dim !== dim || run.inverse !== inverse) {
      run = { from: x, to: x, text: "", fg, bold, dim, inverse };
      runs.push(run);
    }
    run.text += cell.getChars() || " ";
    run.to = x + cell.getWidth();
  }
  return runs;
}

// --- internal ---

function colour(cell: IBufferCell): number | string | null {
  if (cell.isFgDefault()) return null;
  if (cell.isFgRGB()) return `#${cell.getFgColor().toString(16).padStart(6, "0")}`;
  return cell.getFgColor();
}

// The last column that shows a character or a drawn blank (an inverse blank is drawn).
function lastDrawn(line: IBufferLine, cell: IBufferCell): number {
  for (let x = line.length - 1; x >= 0; x--) {
    line.getCell(x, cell);
    if (cell.getChars() || cell.isInverse()) return x;
  }
  return -1;
}
