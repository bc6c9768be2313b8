// Text that came from a file, an agent or another program, made safe to print on the user's terminal: every control
// character (C0, DEL, C1 — ESC among them) is shown the way a JSON string writes it (\n, \t, \r, \b, \f, else
// \u001b), so a hostile value reads as what it is and cannot move the cursor, clear the screen, set the title or
// write the clipboard. The same spelling in human output and in --json output, which stays valid JSON.

const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
const CONTROLS_BUT_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;
const CONTROLS_BUT_LINES_AND_TABS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
const SHORT: Record<string, string> = { "\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f" };

// One value shown inside a line (a table cell, a quoted id, a folder): its line breaks are escaped too.
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, spell);
}

// What uuldana writes to stdout or stderr, at the one place it is written: its own line breaks stay, every other
// control character is escaped. Text already made safe comes out unchanged.
export function safeOutput(text: string): string {
  return text.replace(CONTROLS_BUT_NEWLINE, spell);
}

// A text file uuldana writes (a report, a run's drawn lines, a conversation, a prompt): its line breaks and tabs stay,
// every other control character is escaped, so no file holds one raw for a terminal that shows it with cat.
export function safeFileText(text: string): string {
  return text.replace(CONTROLS_BUT_LINES_AND_TABS, spell);
}

// --- internal ---

function spell(char: string): string {
  return SHORT[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`;
}
