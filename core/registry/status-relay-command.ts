import { fileURLToPath } from "node:url";

// The command line a CLI's status-line setting runs to reach uuldana: this Node running the relay with the feed file
// and, when the user has one, their own status-line command. CLIs run status-line commands through a POSIX shell, so
// this is the one command line uuldana writes as a string; every part of it is quoted.
export function statusRelayCommand(feed: string, own?: string): string {
  const relay = fileURLToPath(new URL("../host/status-relay.js", import.meta.url));
  return [process.execPath, relay, feed, ...(own ? [own] : [])].map(quote).join(" ");
}

// A word for a POSIX shell: in single quotes, a quote inside written '\''.
function quote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
