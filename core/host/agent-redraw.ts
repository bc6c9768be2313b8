import type { AgentPty } from "../terminal/pty.js";

// How long the agent is left one row short when uuldana wants its screen redrawn (its prompt closed, the key hint
// gone): long enough that the two resizes reach it as two on a loaded machine (a signal that arrives twice before it
// is handled is one), and longer than the wait of agents that redraw only once a new size has held for a moment,
// and then only when it differs from the size they drew at (opencode 1.18 redrew after 200 ms here, not after 100).
const REDRAW_MS = 250;

// Has a full-screen agent redraw its screen: it redraws when its size changes, so it is made one row shorter for a
// moment. Nothing is done once the agent is gone.
export function askRedraw(agent: AgentPty, size: { cols: number; rows: number }, gone: () => boolean): void {
  agent.resize(size.cols, Math.max(1, size.rows - 1));
  setTimeout(() => !gone() && agent.resize(size.cols, size.rows), REDRAW_MS).unref();
}
