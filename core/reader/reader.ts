import { MARKS, sentencesOf, splitBlocks, type Block } from "./blocks.js";
import { ALLOWANCE_CODES, ALLOWANCE_ERROR_NAMES, CREDIT_CODES } from "./error-codes.js";
import { modelPatterns } from "./model-names.js";
import { FOREIGN_MAYBE, FOREIGN_SCRIPT, foreignPair, freeTierEnded } from "./languages.js";
import { literal } from "./phrases.js";
import { parseResetTime } from "./reset-time.js";
import type { SpeakerFacts } from "./speaker.js";
import { HOUR_MS, isSourceCode, THROTTLE_MS, timing, VETOES, type Candidate } from "./vetoes.js";

// The general reader: tells text that says a usage allowance is gone from everything else. Pure: no I/O, and the
// clock and time zone come in with the options. It keeps no list of sentences: it looks for a word that says an
// allowance is gone next to a word that names one, then weighs what stands around them.

// "account": the account behind the entry has no allowance at all until something changes on it (a plan without
// usage, a subscription inactive, a budget at $0, a balance below zero)
export type LimitKind = "session" | "weekly" | "daily" | "monthly" | "per-model" | "credits" | "account" | "unknown";

export interface Verdict {
  stop: boolean;
  score: number;
  kind: LimitKind;
  reset_at: string | null;
  reasons: string[];
  // the message that decided, cleaned, from where it begins to the end of its block (what the agent drew before it
  // on the same lines is not part of it), and the line of the text given where it begins
  span: { line: number; text: string } | null;
  // the facts besides the words that the verdict used
  facts?: VerdictFacts;
}

export interface VerdictFacts {
  // the language of the words that decided, when not English ("zh", "ja", "ko", "ru", or "latin" for Spanish,
  // Portuguese, French, German, Polish)
  language?: string;
  // the zone a reset printed without one was read in (the agent's time_zone, else the user's)
  time_zone?: string;
  // a rate-limit wrapper's inner message decided
  inner_message?: boolean;
  // who spoke: how and where the line was drawn, and the agent's own records (see speaker.ts)
  speaker?: SpeakerFacts;
}

export interface ReaderOptions {
  now: Date;
  timeZone: string;
  // the user's locale (BCP 47), which orders a numeric date's day and month
  locale?: string;
  // a provider's own wording (compiled limit_phrases)
  phrases?: readonly RegExp[];
  // bare model names the known agents offer (their manifests' models.names): a limit that names one is that model's,
  // and an agent that says it switched to one carries on; pass the same array each call (compiled once per array)
  models?: readonly string[];
  // a provider adapter's classifier, weighed together with the general reader, never instead of it: it may add a
  // stop the general reader does not see, never one the general rules refuse
  provider?: (text: string) => ProviderReading | undefined;
}

// What a provider's classifier says of a text (its kind one of LimitKind, its reset an ISO instant, when it knows).
export interface ProviderReading {
  stop: boolean;
  kind?: string;
  reset_at?: string;
  reason?: string;
}

export const STOP_SCORE = 4;

// Words that say an allowance is used up, and words that name one.
const GONE = /\b(?:hit|hitting|reached|met(?= (?:your|the|its) )|(?:unavailable|blocked|disabled|paused|stopped) (?:due to|because of)(?= (?:\w+ )?(?:usage|limits?|quotas?|credits?))|exceeded|exhausted|depleted|maxed out|used up|(?:ran|run|running|are|is|be) out of|out of|surpassed|no (?:more )?(?:\w+ ){0,2}(?:left|remaining)|insufficient|exceeds?|used (?:\d{1,3}(?:\.\d+)?\s?%|all|up all)(?: of)?|(?:have|has|with) no|not enough|(?:is |are )?too low|(?:does not|doesn't|do not|don't) have|(?:is |are )?(?:now )?paused|(?<=(?:'ve|have|has) )used|(?:is |are )?at (?:its|your|the) (?:\w+ )?limit|over(?= (?:(?:its|your|the) )?(?:\w+ )?(?:budget|limit|quota|allowance))|(?:is |are |has |have )?(?:been )?(?:ended|expired)|(?:is |are )?(?:negative|empty)|: ?[-−]\$?\d|(?:is |are |at |of |set to )\$0(?:\.0+)?|can(?:not|'t|’t) (?:accrue|use|make|send|get) (?:any )?(?:more|additional)|(?<=(?:credits|quota|allowance|budget) )(?:used|spent|consumed)(?=[.!;]|$))(?=\W|$)/g;
const ALLOWANCE = /\b(?:limits?|quotas?|credits?|usage|allowance|spend(?:ing)? (?:cap|limit)|budget|balance|premium requests?|requests|messages|free (?:trial|tier|plan)|capacity|coins|funds|(?<=(?:your|remaining|free|monthly|daily|weekly|no|more) )tokens|(?<=reached )for (?:this|the) (?:month|day|week|billing period))\b/g;
const CODES = new RegExp(`\\b(?:${[...ALLOWANCE_CODES.map(literal), ALLOWANCE_ERROR_NAMES].join("|")})\\b`, "i");
// HTTP 429 or 402 as an error reports it, not a number in a sentence
const STATUS = /(?:\b(?:http|error|status|code|api error)\W{0,3}|^\W*)(?:429|402)\b|\b(?:429|402)\s*(?:[:({[]|too many|payment required)/i;
// "add credits to continue": the allowance is gone even when no word says so
const TO_CONTINUE = /\b(?:add|purchase|buy|top up)\s+(?:more\s+)?(?:\w+\s+)?credits\b(?:(?![.!?]\s).){0,40}\bto (?:continue|keep using|keep going)\b|\bto (?:continue|keep using)\b(?:(?![.!?]\s).){0,40}\b(?:add|purchase|buy|top up)\s+(?:more\s+)?(?:\w+\s+)?credits\b|\bno (?:paid |more )?(?:\w+ )?(?:usage|credits?|quota) (?:is |are )?available\b|\bcan only afford 0\b/i;
// The account behind the entry has no allowance: a plan, subscription or account in a state that leaves none, a plan
// that does not include the agent, or a remedy offered as the only way to go on ("subscribe to continue").
const ACCOUNT_NOUN = String.raw`(?:subscription|allocation|plan(?! mode)|account|membership|seat|licen[cs]e|(?:free )?trial|free (?:tier|plan)|billing|payment(?: method)?|invoices?)`;
const ACCOUNT_STATE_WORD = String.raw`(?:inactive|expired|ended|over|cancell?ed|lapsed|suspended|restricted|blocked|disabled|deactivated|past due|overdue|unpaid|outstanding|(?:is |are )?not (?:in )?good standing|not active)`;
const ACCOUNT_STATE = new RegExp(
  String.raw`\b${ACCOUNT_NOUN}\b(?:(?![.!?;]\s).){0,60}?\b(?:(?:is|are|has|have|was|been|got) )*${ACCOUNT_STATE_WORD}\b|\b(?:outstanding|overdue|unpaid)\s+(?:invoices?|payments?|balance)\b|\b(?:overdue|suspended|inactive|non[- ]?active|expired|restricted|blocked|deactivated|unpaid|past[- ]due|cancell?ed|lapsed)\s+(?:\w+\s+)?${ACCOUNT_NOUN}\b|\baccess denied\b(?:(?![.!?]\s).){0,40}\bgood standing\b|\bbilling (?:error|failure|issue|problem)\b|\b(?:requires?|needs?|(?:ensure|make sure)(?: that)? you have|must have) (?:an? )?(?:active|valid|paid|positive) (?:subscription|plan|licen[cs]e|seat|balance)\b|\brequires? (?:usage |more |paid |extra )?credits\b|\bneeds? a (?:credit card|payment method) on file\b|\bbalance\b\s*:?\s*(?:is\s+)?[-−]\s*[$€£]?\d`,
  "i",
);
const PLAN_EXCLUDES = new RegExp(
  String.raw`\b(?:plan|subscription|tier|account|seat)\b(?:(?![.!?]\s).){0,50}?\b(?:does not|doesn't|doesn’t|do not|don't|may not|might not|no longer) (?:include|cover|come with|allow|grant|provide)\b|\bnot (?:included|available|covered|enabled|active) (?:in|on|with|by|for) (?:your|the|this) (?:current )?(?:plan|subscription|tier|account|seat|organization|org)\b|\b(?:plan|subscription|seat)\b(?:(?![.!?]\s).){0,30}?\bincludes? no\b|\bno (?:usage|access|allowance) (?:is )?(?:included|available) (?:in|on|with) your\b`,
  "i",
);
const REMEDY = String.raw`(?:upgrade|subscribe|purchase|buy(?: more)?|top up|add (?:more )?(?:credits|funds|a payment method|a credit card|billing)|update (?:your )?(?:payment|billing|plan)|sign up|start (?:a|your) (?:trial|subscription)|set up (?:a )?(?:spending )?(?:budget|billing|payment))`;
const GO_ON = String.raw`(?:to|in order to) (?:continue|keep (?:using|going|working|chatting)|resume|go on|use|access)`;
const TO_GO_ON = new RegExp(
  String.raw`\b${REMEDY}\b(?:(?![.!?]\s).){0,60}?\b${GO_ON}\b|\b${GO_ON}\b(?:(?![.!?]\s).){0,60}?\b${REMEDY}\b`,
  "i",
);
// words without which a sentence has no account state and offers no way on: most are ruled out by these
const ACCOUNT_HINT = /subscri|plan|account|member|seat|licen|trial|free|billing|payment|invoice|allocation|balance|credit/i;
const GO_ON_HINT = /continue|keep|resume|go on|\buse\b|access/i;
// "to use X, upgrade" offers more, unless the user is told they must, or told of their own plan
const MUST = /\b(?:must|need to|needs to|required|requires|have to|please|your (?:plan|subscription|account|seat))\b|\bto (?:continue|keep|resume|go on)\b/i;

const KINDS: [LimitKind, RegExp | undefined][] = [
  ["weekly", /\b(?:weekly|week|7[- ]day|seven[- ]day)\b/i],
  ["session", /\b(?:5[- ]?hours?|five[- ]hour|5h|session)\b/i],
  ["daily", /\b(?:daily|per[ _-]day|a day|24[- ]hour|today's)\b|(?:\b|_)(?:rpd|tpd)\b|当日|今日|每日|本日|일일|diari[oa]|diári[oa]|quotidien|täglich|дневн|суточн|dzienn/i],
  ["monthly", /\b(?:monthly|month|billing (?:cycle|period))\b/i],
  // the names of models come with the options
  ["per-model", undefined],
  ["credits", new RegExp(`\\b(?:credits?|balance|spend|billing|${CREDIT_CODES.map(literal).join("|")}|funds|payment)\\b`, "i")],
];

// Words without which no text can be a stop: most output is ruled out by this one test.
// Each at the start of a word (or after "_", as in error codes): the reader's own patterns look for whole words, and
// the test runs at word starts only, twice as fast as anywhere.
const WORDS = String.raw`(?:\b|_)(?:limit|límite|cuota|cota|saldo|crédit|solde|kontingent|guthaben|quota|credit|usage|allowance|budget|balance|requests|messages|spend|free|exhaust|insufficient|subscri|plan|account|billing|payment|invoice|trial|capacity|upgrade|purchase|sign up|maximum|rate[- ]limited|throttled|allocation|unavailable|buy|top up|keep using|keep going|coins|funds|licen|remaining tokens|your tokens|free tokens|too many tokens)|429|402`;
const ENGLISH_MAYBE = new RegExp(WORDS, "i");
// with a letter of the other scripts agents speak in (see languages.ts), asked about more closely when found
const MAYBE = new RegExp(`${WORDS}|${FOREIGN_SCRIPT.source}`, "gi");

// One pass over a text, and no more for most (which have none of the words): a letter of another script found
// first is looked at more closely, with that script's words or an English word further on.
function maybe(part: string): boolean {
  MAYBE.lastIndex = 0;
  const found = MAYBE.test(part);
  const end = MAYBE.lastIndex;
  MAYBE.lastIndex = 0;
  if (!found) return false;
  // every word of the list ends in a Latin letter or a digit; a letter of the other scripts is one character
  if (part.charCodeAt(end - 1) < 0x400) return true;
  return FOREIGN_MAYBE.test(part) || ENGLISH_MAYBE.test(part.slice(end));
}

// a wait of hours or days in words ("back in several hours")
const LONG_WAIT = /\b(?:in|after|for) (?:a few|several|some|many|\d+) (?:hours|days|weeks)\b/i;
// a period of a day or more: a throttle over one is an allowance ("too many tokens per day")
const PERIOD = /\bper[ _-](?:day|week|month)\b|\b(?:daily|weekly|monthly)\b/i;
// a request throttled: a stop only when the wait it is given is hours long
const THROTTLED = /\b(?:rate[- ]limited|throttled|too many (?:requests|tokens))\b/i;

// the words ALLOWANCE can match: a sentence without one has no pair
const PAIR_HINT = /limit|quota|credit|usage|allowance|spend|budget|balance|request|messages|free|capacity|reached for|coins|funds|tokens/i;

// Classifies a text: stop or not, with the reasons, the kind of limit and when it resets.
export function classifyText(text: string, options: ReaderOptions): Verdict {
  const phrases = options.phrases;
  const mayStop = (part: string): boolean => maybe(part) || (phrases !== undefined && phrases.some((phrase) => phrase.test(part)));
  if (!mayStop(text) && !options.provider) return NOTHING;
  const blocks = splitBlocks(text, mayStop);
  let best: Verdict | undefined;
  for (const block of blocks) {
    let verdict = judgeBlock(block, options);
    if (!verdict) continue;
    if (!verdict.stop) verdict = innerMessage(block.raws.join("\n"), verdict, options) ?? verdict;
    if (!best || (verdict.stop && !best.stop) || (verdict.stop === best.stop && verdict.score > best.score)) best = verdict;
  }
  if (options.provider && !best?.stop) return withProvider(text, best, options) ?? best ?? NOTHING;
  return best ?? NOTHING;
}

const NOTHING: Verdict = Object.freeze({
  stop: false,
  score: 0,
  kind: "unknown",
  reset_at: null,
  reasons: Object.freeze(["no words say that an allowance is gone"]) as unknown as string[],
  span: null,
}) as Verdict;

// --- internal ---

const LIMIT_KINDS: readonly string[] = ["session", "weekly", "daily", "monthly", "per-model", "credits", "account", "unknown"];

// a rate-limit wrapper around another service's error: a status, a type or words that say a request was throttled
const WRAPPER = /\b429\b|rate[_ -]?limit|too many requests|throttl/i;
// the messages an error body holds, its escaped quotation marks undone: "message": "…" and 'message': '…'
const MESSAGE_FIELD = /["']message["']\s*:\s*(?:"((?:[^"\\]|\\.){12,}?)"|'((?:[^'\\]|\\.){12,}?)')/g;

// A rate-limit wrapper (a 429, "rate limit reached, retry shortly") whose inner message, from the service behind it,
// says the allowance or the balance is gone: that inner message is the stop. An inner throttle stays a throttle.
function innerMessage(text: string, outer: Verdict, options: ReaderOptions): Verdict | undefined {
  // only a wrapper refused as a throttle is looked into: one refused as code, a quotation or documentation stays so
  if (!WRAPPER.test(text) || !/message/i.test(text) || !/throttle|rate limit|overloaded|too little/.test(outer.reasons.at(-1) ?? "")) return undefined;
  const plain = text.replace(/\\+(["'])/g, "$1").replace(/\\n/g, "\n");
  // each field read from its own opening quote: an outer message that holds the inner body is read, then the inner
  // each with the rest of its body after it (a quota id per minute, a retry delay), read as its details
  const inner: string[] = [];
  MESSAGE_FIELD.lastIndex = 0;
  for (let match = MESSAGE_FIELD.exec(plain); match; match = MESSAGE_FIELD.exec(plain)) {
    inner.push(`${match[1] ?? match[2]}\n${plain.slice(match.index + match[0].length)}`);
    MESSAGE_FIELD.lastIndex = match.index + 1;
  }
  for (const message of inner.reverse()) {
    const verdict = classifyText(message, { ...options, provider: undefined });
    if (verdict.stop) return { ...verdict, span: outer.span, facts: { ...verdict.facts, inner_message: true }, reasons: ["a rate-limit wrapper whose inner message says the allowance is gone", ...verdict.reasons] };
  }
  return undefined;
}

// A stop the provider's classifier adds where the general reader found none. One the general reader refused (a
// quotation, code, a question, a warning) stays refused; so does one whose own block is quoted, code or a question.
function withProvider(text: string, best: Verdict | undefined, options: ReaderOptions): Verdict | undefined {
  const reading = options.provider!(text);
  if (!reading?.stop || (best && best.score < 0)) return undefined;
  const blocks = splitBlocks(text, () => true);
  // the block the stop stands in: the last one the classifier stops on by itself, else the text as a whole
  const block = blocks.findLast((candidate) => options.provider!(candidate.raws.join("\n"))?.stop) ?? blocks.at(-1);
  if (!block || providerVeto(block)) return undefined;
  const reset = reading.reset_at && !Number.isNaN(Date.parse(reading.reset_at)) && Date.parse(reading.reset_at) > options.now.getTime() ? new Date(reading.reset_at).toISOString() : undefined;
  return {
    stop: true,
    score: STOP_SCORE,
    kind: reading.kind && LIMIT_KINDS.includes(reading.kind) ? (reading.kind as LimitKind) : (best?.kind ?? "unknown"),
    reset_at: reset ?? best?.reset_at ?? resetOf(text, options),
    reasons: [reading.reason ?? "the provider's adapter says the allowance is gone", ...(best?.reasons ?? [])],
    span: best?.span ?? { line: block.line, text: block.text },
  };
}

// Why a block a provider's classifier stopped on is no stop all the same: source code, a quotation, a question.
function providerVeto(block: Block): string | undefined {
  if (isSourceCode(block)) return "source code";
  if (/^\s*["“«`]/.test(block.text) && /["”»`]\s*$/.test(block.text)) return "a quotation";
  if (/\?\s*$/.test(block.text)) return "a question";
  return undefined;
}

function judgeBlock(block: Block, options: ReaderOptions): Verdict | undefined {
  const candidate = findCandidate(block, options);
  if (!candidate) return undefined;
  const verdict = judgeCandidate(block, candidate, options);
  if (!candidate.foreign && !verdict.reset_at) return verdict;
  const facts: VerdictFacts = {};
  if (candidate.foreign) facts.language = languageOf(candidate.phrase);
  if (verdict.reset_at) facts.time_zone = options.timeZone;
  return { ...verdict, facts };
}

const languageOf = (phrase: string): string =>
  /[\u3040-\u30ff]/.test(phrase) ? "ja" : /[\u3400-\u9fff]/.test(phrase) ? "zh" : /[\uac00-\ud7af]/.test(phrase) ? "ko" : /[\u0400-\u04ff]/.test(phrase) ? "ru" : "latin";

function judgeCandidate(block: Block, candidate: Candidate, options: ReaderOptions): Verdict {
  const span = messageSpan(candidate);
  const found = candidate.account
    ? `"${candidate.phrase}" says the account has no allowance`
    : candidate.byCode
    ? `an error code says the allowance is gone ("${candidate.phrase}")`
    : candidate.byPhrase
      ? `the provider's limit phrase matches ("${candidate.phrase}")`
      : `"${candidate.phrase}" is about an allowance running out`;
  const named = kindOf(block.text, candidate);
  const kind = candidate.account && (named === "unknown" || named === "credits") ? "account" : named;
  candidate.options = options;
  if (candidate.throttled && !((timing(candidate).untilReset ?? 0) >= HOUR_MS) && !PERIOD.test(block.message)) {
    return { stop: false, score: -1, kind, reset_at: null, reasons: [found, "not a stop: a throttle without a wait of hours"], span };
  }
  // the first reason it is not a stop is enough
  const vetoes: string[] = [];
  for (const veto of VETOES) {
    const reason = veto.test(candidate);
    if (reason) {
      vetoes.push(reason);
      break;
    }
  }
  if (vetoes.length) {
    return { stop: false, score: -vetoes.length, kind, reset_at: null, reasons: [found, ...vetoes.map((v) => `not a stop: ${v}`)], span };
  }
  const reasons = [found];
  // a "rate limit" over a day or more, or one that lifts only hours later, is an allowance by another name
  const rateLimit =
    /\brate[- ]?limit/i.test(candidate.sentence.slice(Math.max(0, candidate.sentence.toLowerCase().indexOf(candidate.allowance.toLowerCase()) - 6))) &&
    !["session", "daily", "weekly", "monthly"].includes(kind) &&
    !LONG_WAIT.test(block.message);
  let score = candidate.byCode || candidate.byPhrase ? 5 : rateLimit ? 1 : 3;
  const read = timing(candidate);
  const { untilReset } = read;
  // the agent's own retry a few seconds away is when it tries again, not when the allowance returns
  const reset = read.ownRetry && untilReset !== undefined && untilReset < THROTTLE_MS ? undefined : read.reset;
  if (rateLimit && kind !== "weekly" && kind !== "daily" && kind !== "monthly" && untilReset !== undefined && untilReset > 0 && untilReset < 3_600_000) {
    return { stop: false, score: -1, kind, reset_at: null, reasons: [found, "not a stop: a rate limit that lifts within the hour"], span };
  }
  if (reset) {
    score += 2;
    reasons.push(`says when it returns ("${reset.text}")`);
  }
  if (/\b(?:upgrade|add (?:more )?credits|purchase|buy|billing|plan|wait|try again later|switch (?:to )?(?:a |another )?models?|contact|top up|increase your)\b|\w\/usage\b/i.test(block.text)) {
    score += 1;
    reasons.push("says what to do about it");
  }
  if (/\b(?:you|your|you've|you're|you’ve)\b/i.test(block.text)) {
    score += 1;
    reasons.push("is addressed to the user");
  }
  if (block.text.length <= 300) {
    score += 1;
    reasons.push("is a short message");
  }
  if (kind !== "unknown") {
    score += 1;
    reasons.push(`names the limit (${kind})`);
  }
  const stop = score >= STOP_SCORE;
  if (!stop) reasons.push(`not a stop: too little around it (score ${score}, a stop needs ${STOP_SCORE})`);
  return { stop, score, kind, reset_at: stop ? (reset?.at.toISOString() ?? null) : null, reasons, span };
}

// The message itself within its block: from the line where the deciding phrase stands (or the line before, when the
// phrase's sentence wraps onto it in lower case), but never before the phrase's sentence — a plan or an answer the
// agent drew just above the message, with no blank line between, is not part of it.
function messageSpan(candidate: Candidate): { line: number; text: string } {
  const { block } = candidate;
  const starts: number[] = [];
  let offset = 0;
  for (const line of block.lines) {
    starts.push(offset);
    offset += line.text.length + 1;
  }
  const sentenceLine = Math.max(0, starts.findLastIndex((start) => start <= candidate.at));
  let line = Math.max(0, starts.findLastIndex((start) => start <= candidate.phraseAt));
  while (line > sentenceLine && /^[a-z]/.test(block.lines[line]!.text)) line--;
  let from = Math.max(candidate.at, starts[line]!);
  // a sentence the agent ended on the same line, just before the message, is its own
  const ended = [...block.text.slice(from, candidate.phraseAt).matchAll(/[.!?]["')\]]?\s+(?=\S)/g)].at(-1);
  if (ended) from += ended.index + ended[0].length;
  return { line: block.lines[line]!.index, text: block.text.slice(from).replace(MARKS, "") };
}

function resetOf(text: string, options: ReaderOptions): string | null {
  return parseResetTime(text, options)?.at.toISOString() ?? null;
}

function findCandidate(block: Block, options: ReaderOptions): Candidate | undefined {
  const models = modelPatterns(options.models);
  const candidates: Candidate[] = [];
  // a remedy offered as the only way on ("subscribe to continue") decides only where nothing else in the block does
  const remedies: Candidate[] = [];
  // so does a request throttled, and only when the wait it is given is hours long
  const throttles: Candidate[] = [];
  const ended = freeTierEnded(block.text);
  if (ended) {
    const sentence = sentencesOf(block).findLast((part) => part.at <= ended.start) ?? { sentence: block.text, at: 0 };
    candidates.push({ block, models, ...sentence, phraseAt: ended.start, gone: ended.phrase, allowance: ended.phrase, phrase: ended.phrase, byCode: true, byPhrase: false, account: true });
  }
  for (const { sentence, at } of sentencesOf(block)) {
    const code =
      CODES.exec(sentence) ??
      TO_CONTINUE.exec(sentence) ??
      (STATUS.test(sentence) && /\b(?:quota|plan|billing|credits?|usage limit|subscription)\b/i.test(block.text) ? STATUS.exec(sentence) : null);
    if (code) candidates.push({ block, models, sentence, at, phraseAt: at + code.index, gone: code[0], allowance: code[0], phrase: code[0], byCode: true, byPhrase: false, account: false });
    const hinted = ACCOUNT_HINT.test(sentence);
    const state = hinted ? (ACCOUNT_STATE.exec(sentence) ?? PLAN_EXCLUDES.exec(sentence)) : null;
    if (state) candidates.push({ block, models, sentence, at, phraseAt: at + state.index, gone: state[0], allowance: state[0], phrase: state[0], byCode: true, byPhrase: false, account: true });
    const remedy = GO_ON_HINT.test(sentence) ? TO_GO_ON.exec(sentence) : null;
    if (remedy && (!/\b(?:use|access)$/i.test(remedy[0]) || MUST.test(sentence)) && !/\bwithout (?:waiting|the wait|having to wait)\b|\bskip the wait\b/i.test(sentence)) {
      remedies.push({ block, models, sentence, at, phraseAt: at + remedy.index, gone: remedy[0], allowance: remedy[0], phrase: remedy[0], byCode: true, byPhrase: false, account: true });
    }
    for (const phrase of options.phrases ?? []) {
      const match = phrase.exec(sentence);
      if (match) candidates.push({ block, models, sentence, at, phraseAt: at + match.index, gone: match[0], allowance: match[0], phrase: match[0], byCode: false, byPhrase: true, account: false });
    }
    const throttled = THROTTLED.exec(sentence);
    if (throttled) throttles.push({ block, models, sentence, at, phraseAt: at + throttled.index, gone: throttled[0], allowance: throttled[0], phrase: throttled[0], byCode: false, byPhrase: false, account: false, throttled: true });
    const pair = PAIR_HINT.test(sentence) ? nearestPair(sentence.toLowerCase()) : undefined;
    if (pair) {
      const phrase = sentence.slice(pair.start, pair.end);
      candidates.push({ block, models, sentence, at, phraseAt: at + pair.start, gone: pair.gone, allowance: pair.allowance, phrase, byCode: false, byPhrase: false, account: false });
    }
    // the same in another language an agent speaks
    const foreign = pair ? undefined : foreignPair(sentence);
    if (foreign) {
      const phrase = sentence.slice(foreign.start, foreign.end);
      candidates.push({ block, models, sentence, at, phraseAt: at + foreign.start, gone: foreign.gone, allowance: foreign.allowance, phrase, byCode: false, byPhrase: false, account: false, foreign });
    }
  }
  return candidates.find((c) => c.byPhrase) ?? candidates.find((c) => c.byCode) ?? candidates[0] ?? remedies[0] ?? throttles[0];
}

const PAIR_REACH = 200;

// A gone-word and an allowance-word at most six words apart, in either order.
function nearestPair(lower: string): { gone: string; allowance: string; start: number; end: number } | undefined {
  const gones = [...lower.matchAll(GONE)];
  if (!gones.length) return undefined;
  const allowances = [...lower.matchAll(ALLOWANCE)];
  let best: { gone: string; allowance: string; start: number; end: number; distance: number } | undefined;
  // eight words are well within PAIR_REACH characters: only allowance-words that near a gone-word are weighed, so a
  // long line that repeats the words costs time in proportion to its length, not to its length squared
  let first = 0;
  for (const gone of gones) {
    while (first < allowances.length && allowances[first]!.index! < gone.index! - PAIR_REACH) first++;
    for (let i = first; i < allowances.length && allowances[i]!.index! <= gone.index! + PAIR_REACH; i++) {
      const allowance = allowances[i]!;
      const start = Math.min(gone.index!, allowance.index!);
      const end = Math.max(gone.index! + gone[0].length, allowance.index! + allowance[0].length);
      const between = lower.slice(start, end);
      const words = between.split(/\s+/).length;
      if (words > 8 || /[.!?;:]\s/.test(between)) continue;
      if (!best || words < best.distance) best = { gone: gone[0], allowance: allowance[0], start, end, distance: words };
    }
  }
  return best;
}

function kindOf(text: string, candidate: Candidate): LimitKind {
  const near = `${candidate.sentence}`;
  const test = (pattern: RegExp | undefined, part: string): boolean => (pattern ?? candidate.models.perModel).test(part);
  for (const [kind, pattern] of KINDS) if (test(pattern, near)) return kind;
  // elsewhere in the message, credits are usually the remedy offered ("purchase more credits"), not the limit hit
  for (const [kind, pattern] of KINDS) if (kind !== "credits" && test(pattern, text)) return kind;
  return "unknown";
}
