// tmux, the host the peers run their agents in, as a baseline next to script(1). It always runs on a private
// server (its own socket in the benchmark's scratch folder, no config file) that is ended afterwards, so the
// user's own tmux is never touched; where tmux is missing its rows read n/a instead of going away.
import { spawnSync } from "node:child_process";

// tmux's version for the header, or undefined where it is not installed and its rows must read n/a
export function findTmux() {
  const run = spawnSync("tmux", ["-V"], { encoding: "utf8", timeout: 5000 });
  return run.status === 0 ? { version: run.stdout.trim() || "tmux" } : undefined;
}

// The environment without the variables of a tmux the benchmark itself may run in: the private server must not
// be taken for a nested one.
export function outsideTmux(env) {
  const { TMUX, TMUX_PANE, ...rest } = env;
  return rest;
}

// Ends the private server on this socket, if it is still running.
export function killServer(socket) {
  spawnSync("tmux", ["-S", socket, "kill-server"], { stdio: "ignore", timeout: 5000 });
}
