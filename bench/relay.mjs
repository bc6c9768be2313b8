// The floor for any Node pass-through: a bare relay (stdin → node-pty → stdout) with nothing else, for comparison.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(join(dirname(dirname(fileURLToPath(import.meta.url))), "package.json"));
const pty = require("node-pty");
const [file, ...args] = process.argv.slice(2);
const child = pty.spawn(file, args, {
  name: process.env.TERM ?? "xterm-256color",
  cols: process.stdout.columns || 80,
  rows: process.stdout.rows || 24,
  encoding: null,
});
if (process.stdin.isTTY) process.stdin.setRawMode(true);
process.stdin.on("data", (data) => child.write(data));
child.onData((data) => process.stdout.write(data));
child.onExit(({ exitCode }) => {
  process.exitCode = exitCode;
  process.stdin.destroy();
});
