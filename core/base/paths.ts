import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export type Env = Readonly<Record<string, string | undefined>>;

export interface Dirs {
  config: string;
  data: string;
  cache: string;
}

// Where uuldana keeps its config, data and cache: UULDANA_* first, then XDG, then the platform's convention.
export function resolveDirs(env: Env = process.env, platform: NodeJS.Platform = process.platform): Dirs {
  const home = env.HOME || env.USERPROFILE || homedir();
  const pick = (own: string, xdg: string, fallback: string): string => {
    const ownValue = env[own];
    if (ownValue) return ownValue;
    const xdgValue = env[xdg];
    if (xdgValue) return join(xdgValue, "uuldana");
    return fallback;
  };
  if (platform === "win32") {
    const local = env.LOCALAPPDATA || join(home, "AppData", "Local");
    const roaming = env.APPDATA || join(home, "AppData", "Roaming");
    return {
      config: pick("UULDANA_CONFIG_DIR", "XDG_CONFIG_HOME", join(roaming, "uuldana", "Config")),
      data: pick("UULDANA_DATA_DIR", "XDG_DATA_HOME", join(local, "uuldana", "Data")),
      cache: pick("UULDANA_CACHE_DIR", "XDG_CACHE_HOME", join(local, "uuldana", "Cache")),
    };
  }
  if (platform === "darwin") {
    const support = join(home, "Library", "Application Support", "uuldana");
    return {
      config: pick("UULDANA_CONFIG_DIR", "XDG_CONFIG_HOME", support),
      data: pick("UULDANA_DATA_DIR", "XDG_DATA_HOME", support),
      cache: pick("UULDANA_CACHE_DIR", "XDG_CACHE_HOME", join(home, "Library", "Caches", "uuldana")),
    };
  }
  return {
    config: pick("UULDANA_CONFIG_DIR", "XDG_CONFIG_HOME", join(home, ".config", "uuldana")),
    data: pick("UULDANA_DATA_DIR", "XDG_DATA_HOME", join(home, ".local", "share", "uuldana")),
    cache: pick("UULDANA_CACHE_DIR", "XDG_CACHE_HOME", join(home, ".cache", "uuldana")),
  };
}

// Expands a leading "~/" (and nothing else) in a config value.
export function expandHome(value: string, env: Env = process.env): string {
  if (value === "~" || value.startsWith("~/")) {
    return join(env.HOME || env.USERPROFILE || homedir(), value.slice(1));
  }
  return value;
}

// The installed package's root folder (holds manifests/ and schemas/), from core/base/ or dist/core/base/.
export function packageRoot(): string {
  const core = dirname(dirname(fileURLToPath(import.meta.url)));
  return core.endsWith(join("dist", "core")) ? dirname(dirname(core)) : dirname(core);
}
