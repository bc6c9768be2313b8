import type { Screen } from "../terminal/screen.js";

// How often a turn boundary is looked for while one is awaited (and only then).
const BOUNDARY_LOOK_MS = 250;

// What a turn boundary is looked for in: the run's state as it stands at each look.
export interface BoundarySigns {
  screen: Screen;
  ended(): boolean;
  // when the agent last drew anything
  lastOutput(): number;
  // uuldana's prompt is closed and the user's input line empty
  inputIdle(): boolean;
  // the provider's test that the screen shows the agent working
  busy?: (screen: readonly string[]) => boolean;
}

// Resolves at the next turn boundary: the agent quiet for quietMs and not showing that it works, uuldana's prompt
// closed, and the user's input line empty. Never resolves once the run has ended.
export function waitForTurnBoundary(signs: BoundarySigns, quietMs: number): Promise<void> {
  return new Promise((resolve) => {
    const quiet = (): boolean => Date.now() - signs.lastOutput() >= quietMs && signs.inputIdle();
    const again = (): void => void setTimeout(look, BOUNDARY_LOOK_MS).unref();
    const look = (): void => {
      if (signs.ended()) return;
      if (!quiet()) return again();
      void signs.screen.read().then(({ visible }) => {
        if (signs.ended()) return;
        if (!quiet() || signs.busy?.(visible)) again();
        else resolve();
      });
    };
    look();
  });
}
