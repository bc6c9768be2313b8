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
