// script(1) from util-linux is the baseline for a plain pseudo-terminal in between. Where it is missing, or is
// a BSD script without -c, its rows read n/a instead of going away.
import { spawnSync } from "node:child_process";

export function findScript() {
  const works = spawnSync("script", ["-qfc", "true", "/dev/null"], { stdio: "ignore", timeout: 5000 });
  if (works.status !== 0) return undefined;
  const version = spawnSync("script", ["--version"], { encoding: "utf8", timeout: 5000 });
  return { version: version.stdout?.trim().split("\n")[0] || "script" };
}
