import { linkAgent, standInManifest, type Sandbox } from "./helpers.js";

// The stand-in agents of test/fixtures/agents, each on the sandbox PATH with a drop-in manifest.
export const AGENTS: Record<string, string> = {
  line: "line-agent.mjs",
  screen: "screen-agent.mjs",
  keys: "stubborn-keys.mjs",
  term: "stubborn-term.mjs",
  fast: "fast-exit.mjs",
  typed: "typed-agent.mjs",
  dsr: "dsr-agent.mjs",
  relaunch: "relaunch-agent.mjs",
  limit: "limit-agent.mjs",
};

export const EXIT = { keys: ["/exit", "{enter}"], wait_seconds: 1, signals: ["SIGHUP", "SIGTERM"], signal_wait_seconds: 1 };

export function installAgents(sandbox: Sandbox, providers: unknown[] = ["line"]): void {
  for (const [id, script] of Object.entries(AGENTS)) {
    linkAgent(sandbox, id, script);
    sandbox.write(
      `config/providers/${id}.json`,
      standInManifest(id, {
        args: id === "line" ? ["--base"] : [],
        levels: { "read-only": { args: ["--read-only"] }, ask: { args: ["--ask"], env: { LEVEL_ENV: "ask" } } },
        exit: EXIT,
      }),
    );
  }
  sandbox.write("config/config.json", { providers, auto_detect: false });
}
