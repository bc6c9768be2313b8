import { defineProvider, type Turn } from "../core/index.js";

// What Gemini CLI draws, read from its version 0.61.0: the loading line of a running turn, and its conversation (>
// the user's messages, ✦ its answers, ✕ its errors, boxes for tool calls and dialogs), the input box and footer at
// the bottom left out. It has no classify hook: the general reader stops on its quota dialog ("Usage limit reached
// for gemini-2.5-flash."), and the dialog's options alone ("Keep trying", "Stop") are also offered when the service
// is overloaded, which is not a stop.

// Gemini's own lines are short: a longer line is the agent's text or a tool's output, and is not read
const LONGEST = 240;

// the rule above its input area
const RULE = /^─{20,}$/;
// a running turn: the loading line above the input area, a phrase with how to cancel and the time so far
// ("⠹ Thinking... (esc to cancel, 3s)", "(esc to cancel, 1m 9s)")
const LOADING = /\(esc to cancel, (?:\d{1,4}[hms] ?){1,3}\)/;

const USER = /^ ?> (\S.*)$/;
const AGENT = /^(?:✦|✕) (\S.*)$/;
const CONTINUED = /^ {2,}(\S.*)$/;
// the borders of a box it draws for a tool call or a dialog, and what stands between them
const BOX_EDGE = /^ ?[╭╰]─/;
const BOX_SIDE = /^ ?│/;
// the input box's placeholder, the loading line (a braille spinner), notices, and hints it aligns to the right
const PLACEHOLDER = /^Type your message\b/;
const SPINNER = /^ ?[\u2800-\u28ff] /;
const NOTICE = /^ ?(?:ℹ|⚠) /;
const RIGHT_ALIGNED = /^ {20,}\S/;

// A turn is running: the loading line stands just above the rule of the input area.
function busy(screen: readonly string[]): boolean {
  for (let i = screen.length - 1; i >= 0 && i >= screen.length - 30; i--) {
    if (!RULE.test(screen[i]!.trim())) continue;
    for (let j = i - 1, seen = 0; j >= 0 && seen < 3; j--) {
      const line = screen[j]!.trimEnd();
      if (!line) continue;
      seen++;
      if (LOADING.test(line.slice(0, LONGEST))) return true;
    }
    return false;
  }
  return false;
}

// Its turns: > begins the user's, ✦ the agent's and ✕ one of its errors; lines indented under them and what a box
// holds continue them. Everything from the rule of the input area down is not conversation.
function conversation(screenText: string): Turn[] | undefined {
  const lines = screenText.split("\n").map((line) => line.trimEnd());
  const end = lines.findLastIndex((line) => RULE.test(line.trim()));
  const turns: { role: Turn["role"]; lines: string[] }[] = [];
  let open = false;
  let blank = false;
  // a new paragraph: the user's message begins a turn; the agent's bullet goes on with its turn until the user speaks
  const begin = (role: Turn["role"], text: string): void => {
    const last = turns.at(-1);
    if (role === "agent" && last?.role === "agent") last.lines.push("", text);
    else turns.push({ role, lines: [text] });
    open = true;
    blank = false;
  };
  // a line under the open paragraph
  const more = (text: string): void => {
    turns.at(-1)!.lines.push(...(blank ? ["", text] : [text]));
    blank = false;
  };
  for (const line of end === -1 ? lines : lines.slice(0, end)) {
    if (!line) {
      blank = open;
      continue;
    }
    if (line.length > 2000 || RIGHT_ALIGNED.test(line) || SPINNER.test(line) || NOTICE.test(line) || BOX_EDGE.test(line)) continue;
    const user = USER.exec(line);
    const agent = user ? null : AGENT.exec(line);
    const boxed = user || agent ? undefined : insideBox(line);
    if (user && PLACEHOLDER.test(user[1]!)) open = false;
    else if (user) begin("user", user[1]!);
    else if (agent) begin("agent", agent[1]!);
    // a tool call or a dialog in a box: the agent's side of the conversation
    else if (boxed === "") blank = open;
    else if (boxed && open && turns.at(-1)!.role === "agent") more(boxed);
    else if (boxed) begin("agent", boxed);
    else if (CONTINUED.test(line) && open) more(line.slice(2));
    else open = false;
  }
  return turns.length ? turns.map(({ role, lines }) => ({ role, text: lines.join("\n") })) : undefined;
}

// What a line of a box holds between its side borders ("" for an empty one), or undefined for a line of no box.
function insideBox(line: string): string | undefined {
  if (!BOX_SIDE.test(line) || !line.endsWith("│")) return undefined;
  return line.slice(line.indexOf("│") + 1, -1).trim();
}

export default defineProvider({ busy, conversation });
