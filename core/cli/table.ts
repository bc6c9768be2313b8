import { escapeControls } from "../base/safe-text.js";

// Renders rows as left-aligned columns separated by two spaces, without trailing blanks. Cells hold values from
// files and programs: their control characters (line breaks too) are escaped, so each row stays one line.
export function renderTable(header: readonly string[], values: readonly (readonly string[])[]): string {
  const rows = values.map((row) => row.map(escapeControls));
  const widths = header.map((title, column) => Math.max(width(title), ...rows.map((row) => width(row[column] ?? ""))));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell + " ".repeat(widths[column]! - width(cell))))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n") + "\n";
}

// Display width in a terminal: wide East Asian characters count twice, combining marks not at all.
function width(text: string): number {
  let total = 0;
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (/\p{Mn}|\p{Me}|\p{Cf}/u.test(char)) continue;
    total += (code >= 0x1100 && /\p{scx=Han}|\p{scx=Hiragana}|\p{scx=Katakana}|\p{scx=Hangul}|\p{Emoji_Presentation}/u.test(char)) ? 2 : 1;
  }
  return total;
}
