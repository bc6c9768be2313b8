#!/usr/bin/env node
// A stand-in agent CLI for the example pack: it answers each line the user types, and after EXAMPLE_BEANS answers
// (default 2) says its allowance is gone in words of its own. /quit leaves.
if (process.argv.includes("--version")) {
  process.stdout.write("uuldana-example-agent 1.0.0\n");
  process.exit(0);
}
// its own help names the flags its manifest passes: uuldana preflight reads it to check them
if (process.argv.includes("--help")) {
  process.stdout.write(
    [
      "Usage: uuldana-example-agent [options] [prompt]",
      "",
      "Options:",
      "  --read-only  answer only; change nothing",
      "  --ask        ask before each change",
      "  --version    print the version",
      "  --help       show this help",
      "",
    ].join("\n"),
  );
  process.exit(0);
}
const beans = Number(process.env.EXAMPLE_BEANS ?? 2);
const flags = process.argv.slice(2).filter((arg) => arg.startsWith("--"));
const prompt = process.argv.slice(2).find((arg) => !arg.startsWith("--"));
const out = (text) => process.stdout.write(text.replace(/\n/g, "\r\n"));
if (process.stdin.isTTY) process.stdin.setRawMode(true);

out(`Example agent 1.0.0 · ${flags.join(" ") || "no flags"} · /quit leaves\n`);
if (prompt !== undefined) out(`I was started with a prompt of ${prompt.length} characters.\n`);
let left = beans;
const footer = () => out(`── example · ${left} of ${beans} beans left ──\n`);
footer();

let line = "";
process.stdin.on("data", (data) => {
  for (const char of data.toString("utf8").replace(/\x1b/g, "")) {
    if (char === "\x7f") line = line.slice(0, -1);
    else if (char !== "\r" && char !== "\n") line += char;
    else if (line === "/quit") process.exit(0);
    else {
      out(`\n› ${line}\n`);
      if (left === 0) out("(no beans: nothing brewed)\n");
      else {
        left--;
        out(`● Noted: ${line}.\n`);
        footer();
        if (left === 0) out(`☕ The bean jar is empty. beans: 0 of ${beans} left today\n`);
      }
      line = "";
    }
  }
});
