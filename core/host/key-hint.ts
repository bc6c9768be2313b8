import type { AgentPty } from "../terminal/pty.js";
import type { Screen } from "../terminal/screen.js";
import { askRedraw } from "./agent-redraw.js";

// how long a full-screen agent is quiet after its first screen before the hint is drawn, and how long it stays
const QUIET_MS = 1500;
const SHOWN_MS = 6000;
const POLL_MS = 100;

// What the hint watches: the agent's screen, whether the user typed, whether uuldana's prompt is open.
export interface KeyHintParts {
  stdout: NodeJS.WriteStream;
  screen: Screen;
  agent: AgentPty;
  keyName: string;
  lastOutput: () => number;
  typed: () => boolean;
  promptOpen: () => boolean;
  gone: () => boolean;
}

// The line that names the command key at the start is hidden at once by an agent that takes the alternate screen
// (a full-screen agent): once such an agent has drawn its first screen and gone quiet, before the user has typed
// anything, the key is named again on its bottom row, in reverse video, once. It goes at the user's first key or after
// a few seconds, when the agent redraws its screen (as when uuldana's prompt closes). Returns the call that ends it.
export function showKeyHint(parts: KeyHintParts): () => void {
  let shownAt: number | undefined;
  const timer = setInterval(() => {
    const now = Date.now();
    if (parts.gone()) return stop();
    if (shownAt === undefined) {
      if (parts.typed()) return stop();
      if (!parts.screen.modes.altScreen || parts.promptOpen() || now - parts.lastOutput() < QUIET_MS) return;
      shownAt = now;
      parts.stdout.write(hintSequence(parts.keyName, parts.screen.cols, parts.screen.rows));
      return;
    }
    // uuldana's prompt redraws the agent's screen itself when it closes
    if (parts.promptOpen()) return stop();
    if (parts.typed() || now - shownAt >= SHOWN_MS) {
      stop();
      askRedraw(parts.agent, parts.screen, parts.gone);
    }
  }, POLL_MS);
  timer.unref();
  const stop = (): void => clearInterval(timer);
  return stop;
}

// The hint's words, as they show on the bottom row.
export function keyHintText(keyName: string): string {
  return ` ${keyName} opens uuldana's prompt · /help there lists its commands `;
}

// --- internal ---

// The cursor and its attributes saved, the hint on the bottom row (cut to fit, never in the last column, so nothing
// scrolls), and both restored.
function hintSequence(keyName: string, cols: number, rows: number): string {
  const text = [...keyHintText(keyName)].slice(0, Math.max(0, cols - 1)).join("");
  return `\x1b7\x1b[${rows};1H\x1b[0m\x1b[2K\x1b[7m${text}\x1b[0m\x1b8`;
}

