import { readFileSync } from "node:fs";

// A screen captured for a pack's tests: the lines the agent drew, read from the report.md that `uuldana report`
// writes, or from a plain text file of screen lines.

// The lines of a captured screen. From a report: the lines of each block of the agent's drawn lines, in the order the
// report gives them (a candidate's "text it read" is a copy of some of them, so it is left out) — of the runs of one
// provider when `provider` is given. From any other file: its lines, a final line feed ending the last.
export function readScreen(file: string, options: { provider?: string } = {}): string[] {
  const text = readFileSync(file, "utf8").replace(/\r\n/g, "\n");
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  return isReport(lines) ? drawnBlocks(lines, options.provider) : lines;
}

// --- internal ---

// A report begins with its title and holds fenced blocks of text.
function isReport(lines: readonly string[]): boolean {
  return /^# uuldana report\b/.test(lines[0] ?? "") && lines.some((line) => FENCE.test(line));
}

const FENCE = /^(`{3,})text$/;

function drawnBlocks(lines: readonly string[], provider: string | undefined): string[] {
  const out: string[] = [];
  let paragraph = "";
  // the provider of the run being read, from its "- agent: …; provider `id`, entry …" line
  let runProvider: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) {
      if (lines[i]!.startsWith("## Run ")) runProvider = undefined;
      runProvider = /^- agent: .*; provider `([^`]+)`, entry /.exec(lines[i]!)?.[1] ?? runProvider;
      if (lines[i]!.trim()) paragraph = lines[i]!;
      continue;
    }
    const end = lines.indexOf(open[1]!, i + 1);
    const block = lines.slice(i + 1, end === -1 ? lines.length : end);
    if (paragraph !== "The text it read:" && (provider === undefined || runProvider === provider)) out.push(...block);
    i = end === -1 ? lines.length : end;
    paragraph = "";
  }
  return out;
}
