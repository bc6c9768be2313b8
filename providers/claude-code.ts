import { defineProvider, type ProviderVerdict, type Turn } from "../core/index.js";

// What Claude Code draws, read from its versions 2.1.197 and 2.1.332: its limit menu and its native wait at a limit,
// the spinner and footer of a running turn, and its conversation (❯ the user's prompts, ● or ⏺ its answers and tool
// calls, ⎿ what a tool or the CLI answered under them).

// Claude Code's own lines are short: a longer line is the agent's text or a tool's output, and is not read
const LONGEST = 240;

// its native wait: it carries on by itself when the limit resets, so for uuldana the allowance is gone now
// ("Continuing automatically at 6:27pm · Esc to cancel"; some versions "… · esc or type to cancel")
const NATIVE_WAIT = /^(?:⚠ )?(?:usage limit reached · )?continuing automatically (?:at [^·]{1,40}|when it resets|shortly) · esc(?: or type)? to cancel$/i;
// the modal menu it opens at a limit: an option only that menu offers, with its title or its hint
const MENU_OPTION = /^(?:❯ )?\d\. (?:Stop and wait for limit to reset|Wait here, then continue automatically\b.{0,60})$/;
const MENU_FRAME = /^(?:What do you want to do\?|Enter to confirm · Esc to cancel)$/;

// the rules above and below the input box, and the rule that opens a menu in place of the box
const RULE = /^─{20,}$/;
const MENU_RULE = /^▔{20,}/;
// a running turn: the footer under the input box says how to interrupt it, or the spinner above the box (a glyph, a
// word and an ellipsis, perhaps a timer: "✻ Determining…", "✶ Crunching… (12s · esc to interrupt)")
const INTERRUPT = /\besc to interrupt\b/i;
const SPINNER = /^[✻✽✶✳✢·*] \S.{0,60}…(?: \(.{1,80}\))?$/u;

const USER = /^(?:❯|>) (\S.*)$/;
const AGENT = /^(?:●|⏺) (\S.*)$/;
const RESULT = /^ {1,6}⎿ {1,4}(\S.*)$/;
const CONTINUED = /^ {2,}(\S.*)$/;
// the CLI's own notices: tips under a line, limit notices drawn with the agent's bullet, the footer and its hints,
// and notifications it aligns to the right
const TIP = /^Tip: /;
const NOTICE = /^(?:Usage limit (?:reached|reset|available|has reset)|Automatic continue)\b/;
const FOOTER = /^\s*(?:⏸|⏵⏵?) |\? for shortcuts|\besc to interrupt\b|← for agents|\/effort$/;
const RIGHT_ALIGNED = /^ {20,}\S/;
// it pads some marks with no-break spaces ("⎿ \u00a0You've hit your …")
const NBSP = /\u00a0/g;
const EXPAND_HINT = / \(ctrl\+o to expand\)$/;

// Its limit menu and its native wait, which the general reader does not read as a stop.
function classify(text: string): ProviderVerdict | undefined {
  let option: string | undefined;
  let frame = false;
  for (const raw of text.split("\n", 400)) {
    if (raw.length > 2 * LONGEST) continue;
    const line = raw.replace(NBSP, " ").trim();
    if (line.length > LONGEST) continue;
    if (NATIVE_WAIT.test(line)) return { stop: true, reason: `Claude Code waits for its limit to reset by itself ("${line}")` };
    if (MENU_OPTION.test(line)) option ??= line.replace(/^❯ /, "");
    else if (MENU_FRAME.test(line)) frame = true;
  }
  return option && frame ? { stop: true, reason: `Claude Code's limit menu is open ("${option}")` } : undefined;
}

// A turn is running: "esc to interrupt" in the footer under the input box, or the spinner just above the box.
function busy(screen: readonly string[]): boolean {
  let bottom = -1;
  let top = -1;
  for (let i = screen.length - 1; i >= 0 && i >= screen.length - 60; i--) {
    if (!RULE.test(screen[i]!.trim())) continue;
    if (bottom === -1) bottom = i;
    else {
      top = i;
      break;
    }
  }
  if (top === -1 || bottom - top > 12) return false;
  for (let i = bottom + 1; i < screen.length; i++) if (INTERRUPT.test(screen[i]!.slice(0, LONGEST))) return true;
  for (let i = top - 1, seen = 0; i >= 0 && seen < 4; i--) {
    const line = screen[i]!.trimEnd();
    if (!line) continue;
    seen++;
    if (line.length <= LONGEST && SPINNER.test(line)) return true;
  }
  return false;
}

// Its turns: ❯ (or >) begins the user's, ● (or ⏺) the agent's, ⎿ what a tool gave; lines indented under them
// continue them. Spinners, the input box, menus, footers and the CLI's notices are not turns.
function conversation(screenText: string): Turn[] | undefined {
  const turns = new TurnList();
  let inBox = false;
  let inMenu = false;
  for (const raw of screenText.split("\n")) {
    const line = raw.replace(NBSP, " ").trimEnd();
    if (!line) {
      turns.gap();
      continue;
    }
    if (RULE.test(line.trim()) || MENU_RULE.test(line.trim())) {
      // the input box lies between two rules; a menu opens under one and lasts until the next turn
      if (MENU_RULE.test(line.trim())) inMenu = true;
      else inBox = !inBox;
      turns.close();
      continue;
    }
    const user = USER.exec(line);
    const agent = user ? null : AGENT.exec(line);
    if (user || agent) inMenu = false;
    if (inBox || inMenu || line.length > 2000) continue;
    if (!user && !agent && (RIGHT_ALIGNED.test(line) || FOOTER.test(line.slice(0, LONGEST)))) continue;
    const result = user || agent ? null : RESULT.exec(line);
    const continued = user || agent || result ? null : CONTINUED.exec(line);
    if (user) turns.begin("user", user[1]!);
    else if (agent && NOTICE.test(agent[1]!)) turns.close();
    else if (agent) turns.begin("agent", agent[1]!.replace(EXPAND_HINT, ""));
    else if (result && !TIP.test(result[1]!)) turns.add("agent", result[1]!, line.length - result[1]!.length);
    else if (continued) turns.continue(line.slice(Math.min(turns.indent, line.length - continued[1]!.length)).replace(EXPAND_HINT, ""));
    // a line at the margin that begins no turn (a spinner, "✻ Worked for 9s", the banner) ends the one before
    else if (!result) turns.close();
  }
  return turns.list();
}

// Turns as they are read line by line: the one open takes the lines indented under it; an agent's turn goes on
// across its bullets, tool summaries and spinners until the user speaks.
class TurnList {
  private readonly turns: { role: Turn["role"]; lines: string[] }[] = [];
  private open = false;
  private blank = false;
  // where the open paragraph's text begins: the lines under it are indented as far
  indent = 2;

  // a new paragraph: the user's prompt begins a turn, the agent's bullet goes on with its turn
  begin(role: Turn["role"], text: string): void {
    const last = this.turns.at(-1);
    if (role === "agent" && last?.role === "agent") last.lines.push("", text);
    else this.turns.push({ role, lines: [text] });
    this.open = true;
    this.blank = false;
    this.indent = 2;
  }

  // a line under a paragraph (a tool's result): it goes on with the agent's turn, or begins one
  add(role: Turn["role"], text: string, indent: number): void {
    const last = this.turns.at(-1);
    if (last?.role !== role) this.begin(role, text);
    else last.lines.push(...(this.blank ? ["", text] : [text]));
    this.open = true;
    this.blank = false;
    this.indent = indent;
  }

  // an indented line: part of the open turn, if one is open
  continue(text: string): void {
    const last = this.turns.at(-1);
    if (!this.open || !last) return;
    last.lines.push(...(this.blank ? ["", text] : [text]));
    this.blank = false;
  }

  gap(): void {
    if (this.open) this.blank = true;
  }

  close(): void {
    this.open = false;
    this.blank = false;
  }

  list(): Turn[] | undefined {
    return this.turns.length ? this.turns.map(({ role, lines }) => ({ role, text: lines.join("\n") })) : undefined;
  }
}

export default defineProvider({ classify, busy, conversation });
