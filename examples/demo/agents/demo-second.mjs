#!/usr/bin/env node
// The demo's second agent: shows the prompt it was started with (the conversation uuldana handed over), answers
// from it, and waits for /exit.
const out = (text) => process.stdout.write(text);
if (process.argv.includes("--version")) {
  out("uuldana-demo-second 1.0.0\n");
  process.exit(0);
}
const args = process.argv.slice(2);
const at = args.indexOf("--mode");
const mode = at === -1 ? "ask" : args[at + 1];
const prompt = args.filter((arg, i) => arg !== "--mode" && args[i - 1] !== "--mode").join(" ");

out(`\x1b[1m Second demo agent\x1b[0m · ${mode} mode · /exit quits\r\n\r\n`);
if (prompt) {
  out(`I was started with a prompt of ${prompt.length} characters:\r\n`);
  for (const line of prompt.trim().split("\n")) out(`  │ ${line}\r\n`);
  const asked = /quoted here whole:\n\n> (.+)$/m.exec(prompt)?.[1]?.trim();
  out(`\r\n● I have the conversation.${asked ? ` You asked: ${asked}` : ""} Picking up where the first agent stopped.\r\n\r\n`);
} else out("Ask me anything.\r\n");
out("› ");

let line = "";
if (process.stdin.isTTY) process.stdin.setRawMode(true);
process.stdin.on("data", (data) => {
  for (const char of data.toString("utf8")) {
    if (char === "\r" || char === "\n") {
      if (line.trim() === "/exit") {
        out("\r\nGoodbye.\r\n");
        process.exit(0);
      }
      line = "";
      out("\r\n› ");
    } else if (char >= " " && char !== "\x7f") {
      line += char;
      out(char);
    }
  }
});
