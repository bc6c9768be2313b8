// The permission ceiling levels, lowest first.
export const LEVELS = ["read-only", "ask", "auto-edit", "full-access"] as const;

export type Level = (typeof LEVELS)[number];

export function levelRank(level: Level): number {
  return LEVELS.indexOf(level);
}

// The highest level at or below the ceiling among those a provider enforces, or null when none is.
export function pickLevel(enforced: readonly Level[], ceiling: Level): Level | null {
  for (let rank = levelRank(ceiling); rank >= 0; rank--) {
    const level = LEVELS[rank]!;
    if (enforced.includes(level)) return level;
  }
  return null;
}

// The ceiling a session runs under. --ceiling may lower it for one command, never raise it: allowing more is a standing
// choice made in config.json (and a project may only lower that).
export function effectiveCeiling(configured: Level, requested: Level | undefined, projectLimit: Level | undefined): Level {
  const limit = projectLimit && levelRank(projectLimit) < levelRank(configured) ? projectLimit : configured;
  return requested && levelRank(requested) < levelRank(limit) ? requested : limit;
}
