import { escapeControls } from "../base/safe-text.js";

// Text from agents and files put into Markdown so that it reads as written: it can neither end the block it stands
// in, nor turn into markup, nor carry a control character.

// A fenced block that no line of it can close: its fence is longer than any run of backticks inside.
export function fenced(lines: readonly string[]): string {
  const safe = lines.map(escapeControls);
  const fence = "`".repeat(Math.max(3, longestRun(safe.join("\n"), "`") + 1));
  return [`${fence}text`, ...safe, fence].join("\n");
}

// A value inside a line as code (an entry, an id, a kind), whatever backticks it holds.
export function code(text: string): string {
  const safe = escapeControls(text);
  const ticks = "`".repeat(longestRun(safe, "`") + 1);
  const pad = safe.startsWith("`") || safe.endsWith("`") || (safe.startsWith(" ") && safe.endsWith(" ") && safe.trim()) ? " " : "";
  return `${ticks}${pad}${safe}${pad}${ticks}`;
}

// Words inside a line as plain text: Markdown's markup characters are escaped.
export function plain(text: string): string {
  return escapeControls(text).replace(/[\\`*_[\]<>|~&#]/g, "\\$&");
}

// --- internal ---

function longestRun(text: string, char: string): number {
  let longest = 0;
  let run = 0;
  for (const c of text) {
    run = c === char ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}
