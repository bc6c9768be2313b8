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

// The ceiling a session runs under, and where it came from. The level the user typed (--ceiling) replaces their
// config's for that command, higher or lower: they chose it. A project's config only ever lowers what is in force.
export interface CeilingInForce {
  level: Level;
  from: "default" | "config" | "command line" | "project";
  // the notes that explain a level asked for and not used
  notes: string[];
}

export interface CeilingSettings {
  ceiling: Level;
  ceilingFrom: "default" | "config";
  projectCeiling: Level | undefined;
  projectFile: string | undefined;
}

export function ceilingInForce(config: CeilingSettings, typed: Level | undefined): CeilingInForce {
  const base: CeilingInForce = typed ? { level: typed, from: "command line", notes: [] } : { level: config.ceiling, from: config.ceilingFrom, notes: [] };
  const project = config.projectCeiling;
  if (project === undefined) return base;
  if (levelRank(project) < levelRank(base.level)) {
    const notes = typed ? [`note: --ceiling ${typed} is above the ceiling ${config.projectFile} allows (${project}), so ${project} is used`] : [];
    return { level: project, from: "project", notes };
  }
  if (levelRank(project) === levelRank(base.level)) return base;
  return { ...base, notes: [`${config.projectFile}: "ceiling": "${project}" is above your ceiling "${base.level}"; ignored`] };
}

// Where a ceiling came from, as the banner and the title say it; nothing for the standing choice (config or default).
export function ceilingOrigin(ceiling: Pick<CeilingInForce, "level" | "from">, long: boolean): string | undefined {
  if (ceiling.from === "command line") return long ? `--ceiling ${ceiling.level}` : "--ceiling";
  if (ceiling.from === "project") return long ? `ceiling ${ceiling.level} from the project's config` : "project";
  return undefined;
}
