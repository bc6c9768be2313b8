#!/usr/bin/env node
// The demo's first agent: a small terminal agent that answers one question, then says its weekly allowance is gone
// and offers a menu, the way real agents do. Escape closes the menu; /exit quits.
const out = (text) => process.stdout.write(text);
if (process.argv.includes("--version")) {
  out("uuldana-demo-first 1.0.0\n");
  process.exit(0);
}
const at = process.argv.indexOf("--mode");
const mode = at === -1 ? "ask" : process.argv[at + 1];
const ANSWER =
  "uuldana watches the agent's screen. When the agent says its allowance is gone, uuldana waits until it is quiet, " +
  "leaves it with its own exit keys, rests it until the reset it printed, and starts the next agent with this conversation.";

// the reset three days from now at 9am UTC, written as agents write it
const reset = new Date(Date.now() + 3 * 86_400_000);
const month = reset.toLocaleString("en-US", { month: "short", timeZone: "UTC" });
const resetText = `${month} ${reset.getUTCDate()}, 9am (UTC)`;

out(`\x1b[1m First demo agent\x1b[0m · ${mode} mode · /exit quits\r\n\r\n`);
out("Ask me anything.\r\n› ");

let line = "";
let menu = false;
let answered = false;
if (process.stdin.isTTY) process.stdin.setRawMode(true);
process.stdin.on("data", (data) => {
  for (const char of data.toString("utf8")) {
    if (char === "\x1b") {
      if (menu) {
        menu = false;
        out("\r\n(menu closed)\r\n› ");
      }
    } else if (char === "\r" || char === "\n") {
      const typed = line.trim();
      line = "";
      if (typed === "/exit") {
        out("\r\nGoodbye.\r\n");
        process.exit(0);
      }
      if (typed && !answered) {
        answered = true;
        void answer();
      } else out("\r\n› ");
    } else if (char === "\x7f") {
      if (line) {
        line = line.slice(0, -1);
        out("\b \b");
      }
    } else if (char >= " ") {
      line += char;
      out(char);
    }
  }
});

async function answer() {
  out("\r\n\r\n● ");
  for (const word of ANSWER.split(" ")) {
    out(`${word} `);
    await new Promise((resolve) => setTimeout(resolve, 35));
  }
  out("\r\n\r\n");
  await new Promise((resolve) => setTimeout(resolve, 400));
  out(`\x1b[33m  ⎿  You've hit your weekly limit · resets ${resetText}\x1b[0m\r\n\r\n`);
  out(" What do you want to do?\r\n ❯ 1. Stop and wait for the limit to reset\r\n   2. Upgrade your plan\r\n Enter to confirm · Esc to cancel\r\n");
  menu = true;
}
