import { defineProvider, type ProviderVerdict, type Turn } from "../core/index.js";

// What Codex CLI draws, read from its version 0.171.0: the error it shows when the plan does not include Codex, the
// working line of a running turn, and its conversation (› the user's messages, • its answers and tool calls, ■ its
// errors), the composer and footer at the bottom left out.

// Codex's own lines are short: a longer line is the agent's text or a tool's output, and is not read
const LONGEST = 240;

// the plan does not include Codex: nothing resets, no turn can run (the error behind it is usage_not_included)
const NOT_INCLUDED = /^■ To use Codex with your ChatGPT plan, upgrade to [\w -]{1,20}/;

// a running turn: the working line above the composer, with its timer and how to interrupt it
// ("◦ Working (3s • esc to interrupt)")
const WORKING = /^[•◦] \S.{0,60} \(\d[^()]{0,30} • esc to interrupt\)(?: · .{1,80})?$/;

const USER = /^› (\S.*)$/;
const AGENT = /^• (\S.*)$/;
const ERROR = /^■ (\S.*)$/;
const CONTINUED = /^ {2,}(\S.*)$/;
// its notices and warnings, the end of a turn ("Worked for 9s • 16:58"), the footer and the model line under the
// composer, and notifications it aligns to the right
const NOTICE = /^⚠ /;
const WORKED = /^(?:─ )?Worked for [^•─]{1,20}(?: • \d{1,2}:\d{2})?(?: ─+)?$/;
const FOOTER = /^ {2}\S.{0,200}(?:\? for shortcuts|esc to interrupt|f2 to view|context left|← for agents)/;
const MODEL_LINE = /^ {2}\S[^·]{0,60} · [~/]/;
const RIGHT_ALIGNED = /^ {20,}\S/;

// The plan-excludes-Codex error. The general reader reads it as an account stop too; this names it as Codex's own and
// holds if the wording drifts from the general shapes.
function classify(text: string): ProviderVerdict | undefined {
  for (const line of text.split("\n", 400)) {
    const trimmed = line.trim();
    if (trimmed.length <= LONGEST && NOT_INCLUDED.test(trimmed)) return { stop: true, reason: `Codex says this plan does not include it ("${trimmed.slice(2)}")` };
  }
  return undefined;
}

// A turn is running: the working line stands just above the composer (the last line that begins with ›).
function busy(screen: readonly string[]): boolean {
  const composer = composerAt(screen);
  if (composer === -1) return false;
  for (let i = composer - 1, seen = 0; i >= 0 && seen < 4; i--) {
    const line = screen[i]!.trimEnd();
    if (!line) continue;
    seen++;
    if (line.length <= LONGEST && WORKING.test(line)) return true;
  }
  return false;
}

// Its turns: › begins the user's, • the agent's, ■ one of its errors; lines indented under them continue them. The
// composer (a › line with the footer under it), the working line, notices and the footer are not turns.
function conversation(screenText: string): Turn[] | undefined {
  const lines = screenText.split("\n").map((line) => line.trimEnd());
  const turns: { role: Turn["role"]; lines: string[] }[] = [];
  let open = false;
  let blank = false;
  const push = (text: string): void => {
    turns.at(-1)!.lines.push(...(blank ? ["", text] : [text]));
    blank = false;
  };
  lines.forEach((line, index) => {
    if (!line) {
      blank = open;
      return;
    }
    if (line.length > 2000 || RIGHT_ALIGNED.test(line) || NOTICE.test(line) || WORKING.test(line.slice(0, LONGEST))) return;
    if (FOOTER.test(line.slice(0, LONGEST)) || MODEL_LINE.test(line.slice(0, LONGEST)) || WORKED.test(line.trim())) {
      open = false;
      return;
    }
    const user = USER.exec(line);
    if (user) {
      if (isComposer(lines, index)) {
        open = false;
        return;
      }
      turns.push({ role: "user", lines: [user[1]!] });
      open = true;
      blank = false;
      return;
    }
    const agent = AGENT.exec(line) ?? ERROR.exec(line);
    if (agent) {
      // an answer goes on across its bullets (text, tool calls, their output) until the user speaks
      if (turns.at(-1)?.role === "agent") {
        blank = true;
        push(agent[1]!);
      } else turns.push({ role: "agent", lines: [agent[1]!] });
      open = true;
      blank = false;
      return;
    }
    const continued = CONTINUED.exec(line);
    if (continued && open) push(line.slice(2));
    else if (!continued) open = false;
  });
  return turns.length ? turns.map(({ role, lines }) => ({ role, text: lines.join("\n") })) : undefined;
}

// The composer: a › line whose next line with text is the footer or the model line under it.
function isComposer(lines: readonly string[], index: number): boolean {
  for (let i = index + 1; i < lines.length && i <= index + 4; i++) {
    const line = lines[i]!;
    if (!line) continue;
    return FOOTER.test(line.slice(0, LONGEST)) || MODEL_LINE.test(line.slice(0, LONGEST));
  }
  return true;
}

// Where the composer is on a screen: the last › line, if the footer follows it.
function composerAt(screen: readonly string[]): number {
  for (let i = screen.length - 1; i >= 0 && i >= screen.length - 30; i--) {
    if (USER.test(screen[i]!.trimEnd())) return isComposer(screen, i) ? i : -1;
  }
  return -1;
}

export default defineProvider({ classify, busy, conversation });
