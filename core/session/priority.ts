import type { Context } from "../config/context.js";
import { ceilingInForce, type CeilingInForce, type Level } from "../config/levels.js";
import { formatError } from "../base/errors.js";
import { escapeControls } from "../base/safe-text.js";
import { detectProviders } from "../registry/detect.js";
import { loadRegistry } from "../registry/registry.js";
import { readSignIn, type SignInReading } from "../registry/sign-in.js";
import type { Manifest, ManifestRecord } from "../registry/types.js";
import { readCooldowns } from "./cooldowns.js";
import { assessEntry, buildPriorityList, type Assessment } from "./eligibility.js";

export interface ListOptions {
  all?: boolean;
  json?: boolean;
  ceiling?: Level;
  now?: Date;
  // assess for a handoff: an entry must take a first prompt
  handoff?: boolean;
}

// The priority list as it stands, the notes about the files behind it, the ceiling, and the manifest files by id.
export interface Priority {
  rows: Assessment[];
  notes: string[];
  ceiling: Level;
  ceilingFrom: CeilingInForce["from"];
  records: ReadonlyMap<string, ManifestRecord>;
}

// The priority list as the next start would walk it, with each entry's state and reasons.
export async function assessProviders(
  context: Context,
  options: ListOptions = {},
): Promise<Priority> {
  const { config, dirs, env } = context;
  const [registry, cooldowns] = await Promise.all([
    loadRegistry({ configDir: dirs.config, packs: config.packs, replaces: config.replaces, env }),
    readCooldowns(dirs.data),
  ]);
  const providers = new Map<string, Manifest>([...registry.providers].map(([id, record]) => [id, record.manifest]));
  const detections = await detectProviders([...providers.values()], { env, cacheDir: dirs.cache });
  const entries = buildPriorityList({
    entries: config.entries,
    autoDetect: config.autoDetect,
    providers,
    detections,
    includeAll: options.all === true,
  });
  const inForce = ceilingInForce(config, options.ceiling);
  const ceiling = inForce.level;
  const now = options.now ?? new Date();
  // read from files and the environment only: the CLIs themselves are not asked
  const signIns = new Map<string, SignInReading>();
  for (const entry of entries) {
    const manifest = providers.get(entry.id);
    if (manifest) signIns.set(entry.key, readSignIn(entry, manifest, env));
  }
  const rows = entries.map((entry, index) =>
    assessEntry(entry, index + 1, providers, detections, { ceiling, cooldowns, now, handoff: options.handoff, signIns }),
  );
  // each note is one line, whatever the values it quotes from a project's config or a manifest hold
  const notes = [...[...config.notes, ...inForce.notes].map(escapeControls), ...registry.notes.map((note) => `note: ${escapeControls(note)}`)];
  if (cooldowns.problem) notes.push(`warning: ${cooldowns.problem}`);
  notes.push(...sharedAccounts(rows).map(escapeControls));
  const broken = registry.broken.map((record) => formatError(record.error!).trimEnd());
  return { rows, notes: [...notes, ...broken], ceiling, ceilingFrom: inForce.from, records: registry.providers };
}

// --- internal ---

// Entries of one provider that select the same account (the same values of every variable its manifest names in
// account_env) share one allowance: when it is gone for one, it is gone for the other, and a failover between them
// gains nothing. One note per pair, naming the variables that would tell them apart.
function sharedAccounts(rows: readonly Assessment[]): string[] {
  const notes: string[] = [];
  const seen = new Map<string, Assessment>();
  for (const row of rows) {
    const accountEnv = row.manifest?.account_env;
    if (!accountEnv || Object.keys(accountEnv).length === 0 || row.entry.origin === "detected") continue;
    const account = `${row.entry.id}\0${Object.keys(accountEnv).map((name) => row.entry.env[name] ?? "").join("\0")}`;
    const earlier = seen.get(account);
    if (!earlier) {
      seen.set(account, row);
      continue;
    }
    const names = Object.entries(accountEnv).map(([name, what]) => `${name} (${what})`).join(" or ");
    notes.push(`note: entries "${earlier.entry.key}" and "${row.entry.key}" run ${row.entry.id} with the same account, so they share one allowance; to give "${row.entry.key}" another account, set ${names} in its "env"`);
  }
  return notes;
}

