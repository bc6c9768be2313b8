// Telling the user something happened while they look elsewhere: the terminal's bell, and a desktop notification
// through the terminal's own escape sequence where the terminal is known to show one.

export type AlertKind = "osc9" | "osc99" | "osc777" | "bell";

const BELL = "\x07";
// a notification is a sentence, not a page: longer text is cut
const MAX_TEXT = 200;

// Which desktop-notification sequence the user's terminal shows, from its environment. A multiplexer (tmux, screen)
// in between gets the bell only, and so does a terminal not known to show one: some print a sequence they do not know.
export function alertKind(env: Readonly<Record<string, string | undefined>>): AlertKind {
  const term = env.TERM ?? "";
  const program = env.TERM_PROGRAM ?? "";
  if (env.TMUX || env.STY || /^(screen|tmux)/.test(term) || program === "tmux") return "bell";
  if (program === "iTerm.app") return "osc9";
  if (term === "xterm-kitty" || env.KITTY_WINDOW_ID) return "osc99";
  if (program === "WezTerm" || program === "ghostty" || term === "xterm-ghostty" || /^(foot|rxvt-unicode)/.test(term)) return "osc777";
  return "bell";
}

// The bytes that ring the bell and, where the terminal shows one, ask for a desktop notification saying text (made
// safe: no control characters, bounded in length).
export function alertSequence(kind: AlertKind, text: string): string {
  const body = notificationText(text);
  switch (kind) {
    case "osc9":
      // iTerm2's notification: the whole payload is its text
      return `${BELL}\x1b]9;uuldana: ${body}${BELL}`;
    case "osc99":
      // kitty's notification protocol: empty metadata, the payload is the text, ended by ST
      return `${BELL}\x1b]99;;uuldana: ${body}\x1b\\`;
    case "osc777":
      // rxvt-unicode's notify, as foot, WezTerm and Ghostty read it: a title, then the body
      return `${BELL}\x1b]777;notify;uuldana;${body}${BELL}`;
    case "bell":
      return BELL;
  }
}

// --- internal ---

// Text for a notification: control characters become spaces, runs of blanks one, at most MAX_TEXT characters.
function notificationText(text: string): string {
  const plain = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").replace(/\s+/g, " ").trim();
  const chars = Array.from(plain);
  return chars.length <= MAX_TEXT ? plain : chars.slice(0, MAX_TEXT - 1).join("") + "…";
}
