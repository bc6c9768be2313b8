import { createInterface } from "node:readline";

import { closestWord } from "../base/suggest.js";
import type { Context } from "../config/context.js";
import { UuldanaError } from "../base/errors.js";
import { userLocale } from "../base/locale.js";
import { formatInstant } from "../session/eligibility.js";
import { compilePhrase } from "../reader/phrases.js";
import { paidOffer } from "../reader/paid-offer.js";
import { classifyText, type ReaderOptions, type Verdict } from "../reader/reader.js";
import { loadBuiltInManifests, loadRegistry } from "../registry/registry.js";
import { result, type CommandResult } from "./result.js";
import { formatWait } from "../base/time.js";

export interface ExplainOptions {
  json?: boolean;
  jsonl?: boolean;
  now?: string;
  provider?: string;
}

// uuldana explain: the reader's verdict on a text, for people checking a phrase.
export async function explainCommand(context: Context | undefined, words: string[], options: ExplainOptions): Promise<CommandResult> {
  const reader = await readerOptions(context, options);
  // on a terminal, standard input is the user typing: say what to type rather than wait in silence
  if ((options.jsonl || !words.length) && process.stdin.isTTY) process.stderr.write(options.jsonl ? TYPE_LINES : TYPE_TEXT);
  if (options.jsonl) return explainLines(reader);
  const text = words.length ? words.join(" ") : await readAll(process.stdin);
  const verdict = withPaidOffer(classifyText(text, reader), text);
  if (options.json) return result(JSON.stringify(verdict, null, 2) + "\n");
  return result(describe(verdict, reader.now));
}

// --- internal ---

const TYPE_TEXT = 'Type or paste the text to explain, then press Ctrl-D on a line of its own (or: uuldana explain "TEXT", uuldana explain < FILE)\n';
const TYPE_LINES = 'Type one JSON string a line ("like this"); each gets its verdict when Ctrl-D ends the input (or: uuldana explain --jsonl < FILE)\n';

async function readerOptions(context: Context | undefined, options: ExplainOptions): Promise<ReaderOptions> {
  const now = options.now ? new Date(options.now) : new Date();
  if (Number.isNaN(now.getTime())) {
    throw new UuldanaError("E_USAGE", `--now ${options.now}: not a date and time`, { hint: "give an ISO 8601 instant, for example 2026-11-30T12:00:00Z" });
  }
  const reader: ReaderOptions = { now, timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone, locale: userLocale(context?.env ?? process.env) };
  // the models the built-in agents offer, so that a limit naming one is read as that model's
  const models = new Set((await loadBuiltInManifests()).flatMap((manifest) => manifest.models?.names ?? []));
  reader.models = [...models];
  if (options.provider && context) {
    const registry = await loadRegistry({ configDir: context.dirs.config, packs: context.config.packs, replaces: context.config.replaces, env: context.env });
    const record = registry.providers.get(options.provider);
    if (!record) {
      const near = closestWord(options.provider, [...registry.providers.keys()]);
      throw new UuldanaError("E_USAGE", `--provider ${options.provider}: no valid manifest has this id`, {
        hint: near ? `did you mean --provider ${near}?` : 'run "uuldana providers list --all" to see the known providers',
      });
    }
    reader.phrases = (record.manifest.limit_phrases ?? []).map(compilePhrase);
    if (record.manifest.time_zone) reader.timeZone = record.manifest.time_zone;
    reader.models = [...new Set([...models, ...(record.manifest.models?.names ?? [])])];
  }
  return reader;
}

// One JSON string per input line, one verdict per output line, in the same order.
async function explainLines(reader: ReaderOptions): Promise<CommandResult> {
  const lines: string[] = [];
  const input = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of input) {
    let text: unknown;
    try {
      text = JSON.parse(line);
    } catch {
      lines.push(JSON.stringify({ error: "not JSON: each input line must be one JSON string" }));
      continue;
    }
    if (typeof text !== "string") {
      lines.push(JSON.stringify({ error: "not a JSON string: each input line must be one JSON string" }));
      continue;
    }
    lines.push(JSON.stringify(withPaidOffer(classifyText(text, reader), text)));
  }
  return result(lines.length ? lines.join("\n") + "\n" : "");
}

// A stop whose text offers paid usage (credits, a banked reset) says so: paid_offer true, the field absent otherwise.
function withPaidOffer(verdict: Verdict, text: string): Verdict & { paid_offer?: true } {
  return verdict.stop && paidOffer(text) ? { ...verdict, paid_offer: true } : verdict;
}

function describe(verdict: Verdict & { paid_offer?: true }, now: Date): string {
  const what = verdict.kind === "account" ? "the account has no allowance" : `a ${verdict.kind === "unknown" ? "usage" : verdict.kind} limit`;
  const lines = [verdict.stop ? `stop: yes, ${what} (score ${verdict.score})` : `stop: no (score ${verdict.score})`];
  if (verdict.reset_at) {
    const at = new Date(verdict.reset_at);
    const when = at.getTime() < now.getTime() ? "already past" : `in ${formatWait(at.getTime() - now.getTime())}`;
    lines.push(`returns: ${formatInstant(at)} (${when})`);
  } else if (verdict.stop) {
    lines.push("returns: not said; the entry would rest for cooldown_minutes");
  }
  if (verdict.paid_offer) lines.push("paid: it offers paid usage (credits, a banked reset); uuldana takes it only as paid_usage allows (default never: it fails over)");
  lines.push("because:");
  for (const reason of verdict.reasons) lines.push(`  - ${reason}`);
  return lines.join("\n") + "\n";
}

function readAll(stream: NodeJS.ReadStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => (text += chunk));
    stream.on("end", () => resolve(text));
    stream.on("error", reject);
  });
}
