#!/usr/bin/env node
// The status-line relay: a CLI that runs a status-line command after each answer (with its status as JSON on stdin)
// runs this instead, through uuldana's settings for the run. It keeps the JSON for uuldana in the feed file (replaced
// whole, readable by its owner only), then runs the user's own status-line command, if there is one, the way the CLI
// would have: through the shell, with the same JSON on its stdin, its output shown as the status line.
//   status-relay <feed file> [<the user's own command>]
import { spawnSync } from "node:child_process";
import { readFileSync, renameSync, writeFileSync } from "node:fs";

import { escapeJsonControls } from "../base/json.js";

const [feed, own] = process.argv.slice(2);
let input = "";
try {
  input = readFileSync(0, "utf8");
} catch {
  // no status on stdin: nothing to keep
}
if (feed && input.trim()) {
  try {
    const temp = `${feed}.${process.pid}.tmp`;
    // what the CLI gave may hold controls JSON.stringify leaves raw (C1, DEL): none reaches the file
    writeFileSync(temp, escapeJsonControls(input), { mode: 0o600 });
    renameSync(temp, feed);
  } catch {
    // a feed that cannot be written costs uuldana one reading, never the user's status line
  }
}
if (own) {
  // the one place a command line is a shell string: it is the user's own status-line command, which the CLI itself
  // would have run through the shell
  const shown = spawnSync(own, { shell: true, input, stdio: ["pipe", "inherit", "inherit"] });
  process.exitCode = shown.status ?? 1;
}
