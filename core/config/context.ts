import { UuldanaError, type ErrorCode } from "../base/errors.js";
import { loadConfig, type Config } from "./config.js";
import { resolveDirs, type Dirs, type Env } from "../base/paths.js";

// What every command starts from: where files live and the merged config.
export interface Context {
  dirs: Dirs;
  config: Config;
  env: Env;
  cwd: string;
}

export interface ContextOptions {
  configFile?: string;
  env?: Env;
  cwd?: string;
}

export async function loadContext(options: ContextOptions = {}): Promise<Context> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const dirs = resolveDirs(env);
  const config = await loadConfig({ configDir: dirs.config, configFile: options.configFile, cwd, env });
  return { dirs, config, env, cwd };
}

// For the commands that only read uuldana's own records (sessions, cooldowns, explain, report, completion): they
// never load a project's config, which decides nothing of theirs, and a broken config.json does not stop them: they
// go on with the defaults, and the notice says so, for the caller to print once.
export async function loadContextDespiteConfig(options: ContextOptions = {}): Promise<{ context: Context; notice?: string }> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const dirs = resolveDirs(env);
  const base = { configDir: dirs.config, configFile: options.configFile, cwd, env, project: false };
  try {
    return { context: { dirs, config: await loadConfig(base), env, cwd } };
  } catch (error) {
    if (!isConfigProblem(error)) throw error;
    const config = await loadConfig({ ...base, user: false });
    const notice = `note: your config is not used (the defaults are): ${error.message} [${error.code}]; this command does not need it ("uuldana providers list" shows what to fix)`;
    return { context: { dirs, config, env, cwd }, notice };
  }
}

// --- internal ---

const CONFIG_PROBLEMS: readonly ErrorCode[] = [
  "E_CONFIG_INVALID",
  "E_CONFIG_UNREADABLE",
  "E_CONFIG_DUPLICATE_ENTRY",
  "E_JSON_SYNTAX",
  "E_JSON_DUPLICATE_KEY",
  "E_JSON_TOO_DEEP",
  "E_YAML_SYNTAX",
];

function isConfigProblem(error: unknown): error is UuldanaError {
  return error instanceof UuldanaError && CONFIG_PROBLEMS.includes(error.code);
}
