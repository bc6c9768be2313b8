// A real terminal held by a test: a pseudo-terminal whose screen is drawn by a headless xterm, which also answers
// the programs' terminal queries as a real one would. A shell in it prints the terminal's settings, runs
// "uuldana run", then prints its exit code and the settings again and reads one line.
import { createRequire } from "node:module";
import { join } from "node:path";

const SCRIPT = [
  "stty -g",
  '"$1" "$2" run',
  'echo "code $?"',
  'echo "settings-after $(stty -g)"',
  'echo "waiting for a line"',
  "read line",
  'echo "read: $line"',
].join("; ");

// control sequences (CSI), strings (OSC, DCS) and the short escapes, so what the shell printed reads as text
const ESCAPES = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b[\]P_^][^\x07\x1b]*(\x07|\x1b\\)|\x1b[ -/]*[0-~]/g;

// The terminal, with "uuldana run" started in it under the environment given (uuldana's folders included).
export function startTerminal({ root, cwd, env, cols = 120, rows = 40 }) {
  const require = createRequire(join(root, "package.json"));
  const pty = require("node-pty");
  const { Terminal } = require("@xterm/headless");
  const screen = new Terminal({ cols, rows, scrollback: 2000, allowProposedApi: true });
  const child = pty.spawn("/bin/sh", ["-c", SCRIPT, "sh", process.execPath, join(root, "dist", "core", "cli", "main.js")], { name: "xterm-256color", cols, rows, cwd, env });
  let output = "";
  let exited = false;
  const exit = new Promise((resolve) => child.onExit(resolve)).then(() => (exited = true));
  child.onData((data) => {
    output += data;
    screen.write(data);
  });
  screen.onData((reply) => {
    if (!exited) child.write(reply);
  });
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const drawn = () => new Promise((resolve) => screen.write("", resolve));
  const lines = () => {
    const buffer = screen.buffer.active;
    const all = [];
    for (let y = 0; y < buffer.length; y++) all.push(buffer.getLine(y)?.translateToString(true) ?? "");
    return all;
  };
  return {
    output: () => output,
    plainOutput: () => output.replace(ESCAPES, "").replace(/\r/g, ""),
    lines,
    text: () => lines().join("\n"),
    // the terminal's settings ("stty -g") as the shell printed them before uuldana started and after it ended;
    // waits a while for the second, which the shell prints just after uuldana's exit code
    async settings() {
      const printedAfter = () => /^settings-after /m.test(this.plainOutput());
      await this.waitFor(printedAfter, 5000);
      const printed = this.plainOutput().split("\n").map((line) => line.trim());
      return {
        before: printed.find((line) => /^[0-9a-f]+(:[0-9a-f]+){10,}$/.test(line)),
        after: printed.find((line) => line.startsWith("settings-after "))?.slice("settings-after ".length),
      };
    },
    write: (data) => child.write(data),
    // waits for a condition on what has been drawn, up to a deadline; true if it came
    async waitFor(test, ms) {
      const deadline = Date.now() + ms;
      for (;;) {
        await drawn();
        if (test()) return true;
        if (Date.now() > deadline) return false;
        await sleep(200);
      }
    },
    // waits until the screen has not changed for a second (at most ten), so a keypress is not lost in a redraw
    async settle() {
      let last = "";
      let since = Date.now();
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline && Date.now() - since < 1000) {
        await drawn();
        const now = lines().join("\n");
        if (now !== last) (last = now), (since = Date.now());
        await sleep(100);
      }
    },
    // types a message the way a user does: the text, then Enter as a key of its own
    async type(text) {
      await this.settle();
      child.write(text);
      await sleep(500);
      child.write("\r");
    },
    // ends the shell (left waiting for its line when a check failed early) and everything in its process group
    async close() {
      if (!exited) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // already gone
        }
        await Promise.race([exit, sleep(2000)]);
      }
      screen.dispose();
    },
  };
}
