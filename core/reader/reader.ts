import { stripEscapes } from "../base/ansi.js";
import { ALLOWANCE_CODES, ALLOWANCE_ERROR_NAMES, CREDIT_CODES, OVERLOADED_STATUSES } from "./error-codes.js";
import { BORDER, MARKER } from "./glyphs.js";
import { modelPatterns, type ModelPatterns } from "./model-names.js";
import { parseResetTime, type ResetTime } from "./reset-time.js";

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

// A text as regular-expression source that matches it literally.
const literal = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

// Words that say an allowance is used up, and words that name one.
const GONE = /\b(?:hit|hitting|reached|exceeded|exhausted|depleted|maxed out|used up|(?:ran|run|running|are|is|be) out of|out of|surpassed|no (?:more )?(?:\w+ ){0,2}(?:left|remaining)|insufficient|exceeds?|used (?:\d{1,3}(?:\.\d+)?\s?%|all|up all)(?: of)?|(?:have|has|with) no|not enough|(?:is |are )?too low|(?:does not|doesn't|do not|don't) have|(?:is |are )?(?:now )?paused|(?<=(?:'ve|have|has) )used|(?:is |are )?at (?:its|your|the) (?:\w+ )?limit|over(?= (?:(?:its|your|the) )?(?:\w+ )?(?:budget|limit|quota|allowance))|(?:is |are |has |have )?(?:been )?(?:ended|expired)|(?:is |are )?(?:negative|empty)|: ?[-−]\$?\d|(?:is |are |at |of |set to )\$0(?:\.0+)?|can(?:not|'t|’t) (?:accrue|use|make|send|get) (?:any )?(?:more|additional)|(?<=(?:credits|quota|allowance|budget) )(?:used|spent|consumed)(?=[.!;]|$))(?=\W|$)/g;
const ALLOWANCE = /\b(?:limits?|quotas?|credits?|usage|allowance|spend(?:ing)? (?:cap|limit)|budget|balance|premium requests?|requests|messages|free (?:trial|tier|plan)|capacity|(?<=reached )for (?:this|the) (?:month|day|week|billing period))\b/g;
const CODES = new RegExp(`\\b(?:${[...ALLOWANCE_CODES.map(literal), ALLOWANCE_ERROR_NAMES].join("|")})\\b`, "i");
// HTTP 429 or 402 as an error reports it, not a number in a sentence
const STATUS = /(?:\b(?:http|error|status|code|api error)\W{0,3}|^\W*)(?:429|402)\b|\b(?:429|402)\s*(?:[:({[]|too many|payment required)/i;
// "add credits to continue": the allowance is gone even when no word says so
const TO_CONTINUE = /\b(?:add|purchase|buy|top up)\s+(?:more\s+)?(?:\w+\s+)?credits\b(?:(?![.!?]\s).){0,40}\bto (?:continue|keep using|keep going)\b|\bto (?:continue|keep using)\b(?:(?![.!?]\s).){0,40}\b(?:add|purchase|buy|top up)\s+(?:more\s+)?(?:\w+\s+)?credits\b|\bno (?:paid |more )?(?:\w+ )?(?:usage|credits?|quota) (?:is |are )?available\b/i;
// The account behind the entry has no allowance: a plan, subscription or account in a state that leaves none, a plan
// that does not include the agent, or a remedy offered as the only way to go on ("subscribe to continue").
const ACCOUNT_NOUN = String.raw`(?:subscription|allocation|plan(?! mode)|account|membership|seat|licen[cs]e|(?:free )?trial|free (?:tier|plan)|billing|payment(?: method)?|invoices?)`;
const ACCOUNT_STATE_WORD = String.raw`(?:inactive|expired|ended|over|cancell?ed|lapsed|suspended|restricted|blocked|disabled|deactivated|past due|overdue|unpaid|outstanding|(?:is |are )?not (?:in )?good standing|not active)`;
const ACCOUNT_STATE = new RegExp(
  String.raw`\b${ACCOUNT_NOUN}\b(?:(?![.!?;]\s).){0,60}?\b(?:(?:is|are|has|have|was|been|got) )*${ACCOUNT_STATE_WORD}\b|\b(?:outstanding|overdue|unpaid)\s+(?:invoices?|payments?|balance)\b|\b(?:overdue|suspended|inactive|expired|restricted|blocked|deactivated|unpaid|past[- ]due|cancell?ed|lapsed)\s+(?:\w+\s+)?${ACCOUNT_NOUN}\b|\baccess denied\b(?:(?![.!?]\s).){0,40}\bgood standing\b|\bbalance\b\s*:?\s*(?:is\s+)?[-−]\s*[$€£]?\d`,
  "i",
);
const PLAN_EXCLUDES = new RegExp(
  String.raw`\b(?:plan|subscription|tier|account|seat)\b(?:(?![.!?]\s).){0,50}?\b(?:does not|doesn't|doesn’t|do not|don't|may not|might not|no longer) (?:include|cover|come with|allow|grant|provide)\b|\bnot (?:included|available|covered) (?:in|on|with|by) (?:your|the) (?:current )?(?:plan|subscription|tier)\b|\b(?:plan|subscription|seat)\b(?:(?![.!?]\s).){0,30}?\bincludes? no\b|\bno (?:usage|access|allowance) (?:is )?(?:included|available) (?:in|on|with) your\b`,
  "i",
);
const REMEDY = String.raw`(?:upgrade|subscribe|purchase|buy(?: more)?|top up|add (?:more )?(?:credits|funds|a payment method|billing)|update (?:your )?(?:payment|billing|plan)|sign up|start (?:a|your) (?:trial|subscription)|set up (?:a )?(?:spending )?(?:budget|billing|payment))`;
const GO_ON = String.raw`(?:to|in order to) (?:continue|keep (?:using|going|working|chatting)|resume|go on|use|access)`;
const TO_GO_ON = new RegExp(
  String.raw`\b${REMEDY}\b(?:(?![.!?]\s).){0,60}?\b${GO_ON}\b|\b${GO_ON}\b(?:(?![.!?]\s).){0,60}?\b${REMEDY}\b`,
  "i",
);
// words without which a sentence has no account state and offers no way on: most are ruled out by these
const ACCOUNT_HINT = /subscri|plan|account|member|seat|licen|trial|free|billing|payment|invoice|allocation|balance/i;
const GO_ON_HINT = /continue|keep|resume|go on|\buse\b|access/i;
// "to use X, upgrade" offers more, unless the user is told they must, or told of their own plan
const MUST = /\b(?:must|need to|needs to|required|requires|have to|please|your (?:plan|subscription|account|seat))\b|\bto (?:continue|keep|resume|go on)\b/i;
// a JSON error body: its quotation marks are syntax, not someone quoting a message
const JSON_BODY = /[{,]\s*["']?(?:message|error|type|code|status)["']?\s*:/;

const KINDS: [LimitKind, RegExp | undefined][] = [
  ["weekly", /\b(?:weekly|week|7[- ]day|seven[- ]day)\b/i],
  ["session", /\b(?:5[- ]?hours?|five[- ]hour|5h|session)\b/i],
  ["daily", /\b(?:daily|per day|a day|24[- ]hour|today's)\b/i],
  ["monthly", /\b(?:monthly|month|billing (?:cycle|period))\b/i],
  // the names of models come with the options
  ["per-model", undefined],
  ["credits", new RegExp(`\\b(?:credits?|balance|spend|billing|${CREDIT_CODES.map(literal).join("|")}|funds|payment)\\b`, "i")],
];

interface Check {
  test(context: Candidate): string | undefined;
}

interface Candidate {
  block: Block;
  models: ModelPatterns;
  sentence: string;
  // where the sentence and the phrase begin in the block's text
  at: number;
  phraseAt: number;
  before: string;
  gone: string;
  allowance: string;
  phrase: string;
  byCode: boolean;
  byPhrase: boolean;
  // the wording says the account itself has no allowance (a plan without usage, a subscription inactive)
  account: boolean;
  // found only by a request being throttled ("rate-limited", "too many requests"): a stop when the wait is hours
  throttled?: boolean;
  // when the allowance returns, read the first time a check asks (reading it costs more than most checks): see
  // timing()
  read?: Timing;
  options?: ReaderOptions;
}

interface Timing {
  reset: ResetTime | undefined;
  // how long until the allowance returns, when the message says (0 for "in 0s")
  untilReset: number | undefined;
  // whether that time was given as a wait ("in 56s", "after 2h") rather than as a clock time or a date
  waited: boolean;
  // whether that wait is the agent's own retry ("retrying in 29s"), not the service's
  ownRetry: boolean;
}

interface Block {
  text: string;
  // the index of its first line in the text given
  line: number;
  // each with its index in the text given
  lines: { raw: string; text: string; index: number }[];
  // every line as drawn, those that clean to nothing too
  raws: string[];
  // the lines of the same paragraph above the block, as drawn (at most PRIOR_LINES)
  prior: string[];
  // the rest of the same message after the block, cleaned: the following lines up to a blank line (and the next
  // paragraph too when the block's own ends by introducing it with a colon) — where a reset or an API error's
  // details often stand
  after: string;
  // the block's text and the lines after it, as one text
  message: string;
}

// Words without which no text can be a stop: most output is ruled out by this one test.
// Each at the start of a word (or after "_", as in error codes): the reader's own patterns look for whole words, and
// the test runs at word starts only, twice as fast as anywhere.
const MAYBE = /(?:\b|_)(?:limit|quota|credit|usage|allowance|budget|balance|requests|messages|spend|free|exhaust|insufficient|subscri|plan|account|billing|payment|invoice|trial|capacity|upgrade|purchase|sign up|maximum|rate[- ]limited|throttled|allocation|buy|top up|keep using|keep going)|429|402/i;

// the words ALLOWANCE can match: a sentence without one has no pair
const PAIR_HINT = /limit|quota|credit|usage|allowance|spend|budget|balance|request|messages|free|capacity|reached for/i;

// Classifies a text: stop or not, with the reasons, the kind of limit and when it resets.
export function classifyText(text: string, options: ReaderOptions): Verdict {
  const mayStop = (part: string): boolean => MAYBE.test(part) || (options.phrases ?? []).some((phrase) => phrase.test(part));
  if (!mayStop(text) && !options.provider) return NOTHING;
  const blocks = splitBlocks(text, mayStop);
  let best: Verdict | undefined;
  for (const block of blocks) {
    const verdict = judgeBlock(block, options);
    if (!verdict) continue;
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
  if (candidate.throttled && !((timing(candidate).untilReset ?? 0) >= HOUR_MS)) {
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
  const rateLimit = /\brate[- ]?limit/i.test(candidate.sentence.slice(Math.max(0, candidate.sentence.toLowerCase().indexOf(candidate.allowance.toLowerCase()) - 6)));
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

// A candidate's timing, read once.
function timing(c: Candidate): Timing {
  return (c.read ??= timingOf(c.block, c.options!));
}

// The reset, in the block or on the lines of the message after it, and what kind of time it is.
function timingOf(block: Block, options: ReaderOptions): Timing {
  const reset = parseResetTime(block.text, options) ?? (block.after ? parseResetTime(block.after, options) : undefined);
  const source = block.message;
  if (!reset) {
    const zero = ZERO_WAIT.test(source);
    return { reset, untilReset: zero ? 0 : undefined, waited: zero, ownRetry: false };
  }
  const where = source.indexOf(reset.text);
  return {
    reset,
    untilReset: reset.at.getTime() - options.now.getTime(),
    waited: /^(?:in|after|for|wait)\b/i.test(reset.text),
    ownRetry: where > 0 && /\b(?:retrying|will retry|retry #?\d+|backing off(?: for)?)\s*$/i.test(source.slice(Math.max(0, where - 24), where)),
  };
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
  for (const { sentence, at } of sentencesOf(block)) {
    const before = block.text.slice(0, at);
    const lower = sentence.toLowerCase();
    const code =
      CODES.exec(sentence) ??
      TO_CONTINUE.exec(sentence) ??
      (STATUS.test(sentence) && /\b(?:quota|plan|billing|credits?|usage limit|subscription)\b/i.test(block.text) ? STATUS.exec(sentence) : null);
    if (code) candidates.push({ block, models, sentence, at, phraseAt: at + code.index, before, gone: code[0], allowance: code[0], phrase: code[0], byCode: true, byPhrase: false, account: false });
    const hinted = ACCOUNT_HINT.test(sentence);
    const state = hinted ? (ACCOUNT_STATE.exec(sentence) ?? PLAN_EXCLUDES.exec(sentence)) : null;
    if (state) candidates.push({ block, models, sentence, at, phraseAt: at + state.index, before, gone: state[0], allowance: state[0], phrase: state[0], byCode: true, byPhrase: false, account: true });
    const remedy = GO_ON_HINT.test(sentence) ? TO_GO_ON.exec(sentence) : null;
    if (remedy && (!/\b(?:use|access)$/i.test(remedy[0]) || MUST.test(sentence)) && !/\bwithout (?:waiting|the wait|having to wait)\b|\bskip the wait\b/i.test(sentence)) {
      remedies.push({ block, models, sentence, at, phraseAt: at + remedy.index, before, gone: remedy[0], allowance: remedy[0], phrase: remedy[0], byCode: true, byPhrase: false, account: true });
    }
    for (const phrase of options.phrases ?? []) {
      const match = phrase.exec(sentence);
      if (match) candidates.push({ block, models, sentence, at, phraseAt: at + match.index, before, gone: match[0], allowance: match[0], phrase: match[0], byCode: false, byPhrase: true, account: false });
    }
    const throttled = THROTTLED.exec(sentence);
    if (throttled) throttles.push({ block, models, sentence, at, phraseAt: at + throttled.index, before, gone: throttled[0], allowance: throttled[0], phrase: throttled[0], byCode: false, byPhrase: false, account: false, throttled: true });
    const pair = PAIR_HINT.test(sentence) ? nearestPair(lower) : undefined;
    if (pair) {
      const phrase = sentence.slice(pair.start, pair.end);
      candidates.push({ block, models, sentence, at, phraseAt: at + pair.start, before, gone: pair.gone, allowance: pair.allowance, phrase, byCode: false, byPhrase: false, account: false });
    }
  }
  return candidates.find((c) => c.byPhrase) ?? candidates.find((c) => c.byCode) ?? candidates[0] ?? remedies[0] ?? throttles[0];
}

// The sentences of a block with where each begins: split after a sentence's end, at a middle dot or bar between
// parts of a status line, and where a line begins a new sentence although the one above did not end with a stop
// (a heading above its question: "Out of credits" / "Open the billing page?").
function sentencesOf(block: Block): { sentence: string; at: number }[] {
  const pieces: { text: string; at: number }[] = [];
  let start = 0;
  let offset = 0;
  for (let index = 0; index < block.lines.length; index++) {
    const line = block.lines[index]!.text;
    if (index > 0 && NEW_SENTENCE.test(line) && !CARRIES_ON.test(block.lines[index - 1]!.text)) {
      pieces.push({ text: block.text.slice(start, offset - 1), at: start });
      start = offset;
    }
    offset += line.length + 1;
  }
  pieces.push({ text: block.text.slice(start), at: start });
  const sentences: { sentence: string; at: number }[] = [];
  for (const piece of pieces) {
    let from = 0;
    for (const sentence of piece.text.split(/(?<=[.!?])\s+(?=[A-Z/"'(])|\s+[·∙•|]\s+/)) {
      const at = piece.text.indexOf(sentence, from);
      from = at + sentence.length;
      sentences.push({ sentence, at: piece.at + at });
    }
  }
  return sentences;
}

// a capitalised word, and a line end that leaves its sentence open
const NEW_SENTENCE = /^[A-Z][a-z']+\b/;
const CARRIES_ON = /[,;:&/+(\-–—]$|\b(?:and|or|to|the|a|an|of|your|you|for|with|in|on|at|by|from|until|is|are|be|has|have|will|can|please|using|use)$/i;

const PAIR_REACH = 200;

// A gone-word and an allowance-word at most six words apart, in either order.
function nearestPair(lower: string): { gone: string; allowance: string; start: number; end: number } | undefined {
  const gones = [...lower.matchAll(GONE)];
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

const check = (test: (c: Candidate) => string | undefined): Check => ({ test });

const OVERLOADED = new RegExp(
  `\\b(?:${OVERLOADED_STATUSES.map(literal).join("|")}|overloaded|high (?:load|demand|traffic)|at capacity|capacity constraints?|temporarily unavailable|service unavailable|server (?:is )?busy|experiencing high)\\b`,
  "i",
);

// Each returns why a candidate is not a stop, or undefined.
const VETOES: Check[] = [
  check((c) => {
    const share = /\b(\d{1,3}(?:\.\d+)?)\s?%/.exec(c.sentence);
    return share && Number(share[1]) < 100 ? `a share below 100% (${share[1]}%)` : undefined;
  }),
  check((c) =>
    /\b(?:approaching|almost|nearly|close to|near(?:ing)?|running low|running out|about to|will soon|soon|before you (?:hit|reach)|(?:will|may|might|could|can) (?:hit|reach|exceed|run out))\b/i.test(c.sentence)
      ? "it is only close to the limit"
      : undefined,
  ),
  check((c) => {
    const left = /\b(?:less than |only |just )?(\d+(?:[.,]\d+)?%?|a few|few|some)\s+(?:\w+\s+){0,3}(?:left|remaining)\b/i.exec(c.sentence);
    if (!left) return undefined;
    return /^0+%?$/.test(left[1]!) ? undefined : `some of the allowance is left ("${left[0]}")`;
  }),
  check((c) => {
    // the message and its details on the lines after it (an API error's quota id, its retry delay)
    const text = c.block.message;
    const perMinute = PER_MINUTE.test(text) || (text.includes("Per") && PER_MINUTE_ID.test(text));
    const server = SERVER_RETRY.exec(text);
    const own = OWN_RETRY.exec(text);
    // most candidates name no wait and no throttle: they need no reset read here
    if (!perMinute && !server && !own && !WAIT.test(text)) return undefined;
    const { untilReset, waited, ownRetry } = timing(c);
    if (untilReset !== undefined && untilReset >= HOUR_MS) return undefined;
    if (LONG_PERIOD.test(text) || (text.includes("Per") && LONG_PERIOD_ID.test(text))) return undefined;
    const why = "a rate limit per minute or a throttle that retries";
    if (perMinute) return why;
    // an allowance that is gone stays gone however soon the agent retries; a throttle lifts
    const gone = !THROTTLE_WORDS.test(c.sentence) && (c.account || STRONG_ALLOWANCE.test(c.allowance));
    if (waited && untilReset !== undefined && untilReset < THROTTLE_MS && !(ownRetry && gone)) return why;
    // the service says when to try again: a wait of minutes is a throttle, whatever words came with it
    const serverWait = server ? secondsAfter(text.slice(server.index)) : undefined;
    if (serverWait !== undefined && serverWait < THROTTLE_MS / 1000) return why;
    // the agent retrying by itself says nothing of the allowance: it makes a throttle of a rate limit, not of a
    // quota, credits or free usage that are gone
    if (!own || gone) return undefined;
    const wait = secondsAfter(text.slice(own.index));
    return wait === undefined || wait < THROTTLE_MS / 1000 ? why : undefined;
  }),
  check((c) =>
    OVERLOADED.test(c.block.text) && !((timing(c).untilReset ?? 0) >= HOUR_MS)
      ? "a service overloaded for a while"
      : undefined,
  ),
  check((c) => (ANOTHER_PROVIDER.test(c.block.message) ? "the agent moves to another provider by itself and carries on" : undefined)),
  check((c) => (REMARK.test(c.sentence) ? "a remark about the limit, not the notice" : undefined)),
  check((c) => {
    // someone telling what happened to them, or asking about it, and quoting the message as they go
    const head = c.sentence.slice(0, Math.max(0, c.sentence.toLowerCase().indexOf(c.gone.toLowerCase())));
    if (/(?:^|[^\w'])(?:I|I'm|I've|I'd|my|me)\b/.test(head) && !/\b(?:you|your|you've|you're)\b/i.test(c.sentence)) return "someone telling of the limit, not the notice";
    // another sentence on the message's own line in the first person: a person writing about it (a line above, an
    // answer that ends "… my plan:", is the agent's own)
    const line = lineAround(c.block, c.phraseAt);
    const others = c.block.text.slice(line.start, c.phraseAt) + " " + c.block.text.slice(c.phraseAt + c.phrase.length, line.end);
    if (PERSON.test(others) && !/\b(?:sorry|apologi[sz]e)\b/i.test(others)) return "someone writing about the limit, not the notice";
    const asked = c.block.text.slice(0, c.at);
    return /(?:^|[.!?]\s)(?:[^.!?]*\b(?:I|my|me|we|anyone|why|how come)\b[^.!?]*)\?\s*["“']?\s*$/i.test(asked) ? "a question that quotes the message" : undefined;
  }),
  check((c) =>
    /\b(?:context(?: window| length| limit| size)?|prompt is too long|too many (?:input )?tokens|max(?:imum)? (?:context|tokens|output tokens)|max_tokens|conversation (?:is )?too long|auto-?compact\w*|compacting)\b/i.test(c.sentence) ||
    (/\btoken limit\b/i.test(c.sentence) && !/\b(?:daily|weekly|monthly|resets?|plan)\b/i.test(c.block.text))
      ? "a context window that is full, not an allowance"
      : undefined,
  ),
  check((c) =>
    (switchedModel(c.models).test(c.block.text) || (SWITCH_WORD.test(c.block.after) && switchedAfter(c.models).test(c.block.after))) &&
    !/\bcontinuing automatically at\b/i.test(c.block.text)
      ? "the agent switched model by itself and carries on"
      : undefined,
  ),
  check((c) => (/\b(?:possible|possibly)\b/i.test(c.block.text) ? "a guess at a cause, not a notice" : undefined)),
  check((c) => (/\?\s*$/.test(c.sentence.trim()) || /^\s*(?:how|what|why|when|can|could|did|do|does|is|are|will|should)\b[^.!]*$/i.test(c.sentence) ? "a question" : undefined)),
  check((c) => {
    const head = clauseHead(c);
    return /\b(?:if|when|whenever|once|unless|in case|until|would|could|might|should|what happens|how to|avoid|prevent|in order to|so that|before|possible|possibly|perhaps|maybe|probably|likely)\b/i.test(head)
      ? "a condition or a possibility, not a notice"
      : undefined;
  }),
  check((c) => {
    const head = clauseHead(c);
    return /\b(?:not|never|no longer|haven't|hasn't|didn't|won't|isn't|aren't|don't|doesn't|without)\s+(?:\w+\s+){0,2}$/i.test(head) ? "it says the opposite" : undefined;
  }),
  check((c) => (isSourceCode(c.block) ? "source code" : undefined)),
  check((c) => (!JSON_BODY.test(c.block.text) && isQuoted(c) ? "a quotation, not a notice" : undefined)),
  check((c) =>
    [...c.block.prior, ...c.block.lines.map((line) => line.raw)].some((raw) => MARKDOWN_ITEM.test(raw)) ||
    c.block.lines.some((line) => /^\s*(?:--?[a-z][\w-]*[ ,=]|usage:|options:|commands:|examples?:|#{1,6} |\|.*\|\s*$|note:|tip:|\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}|\[?(?:debug|info|warn|warning|trace)\]?[: ]|\*\*[^*]+\*\*\s*[:—–-]\s)/i.test(line.raw) || SEARCH_RESULT.test(line.raw))
      ? "documentation, help text or a log line"
      : undefined,
  ),
  check((c) =>
    // the bar as drawn: a bar at the start of a line is taken off its text with the marker glyphs
    c.block.raws.some((raw) => /[█▓▒░■□▮▯▰▱]{3,}/.test(raw)) || /\b\d{1,3}(?:\.\d+)?\s?% (?:used|left|remaining)\b/i.test(c.block.text)
      ? "a usage meter"
      : undefined,
  ),
  check((c) => (OWN_BUDGET.test(c.block.text) ? "another sense of \"limit\"" : undefined)),
  check((c) => (CARRIES_ON_ANYWAY.test(c.block.text) ? "the agent carries on by itself" : undefined)),
  check((c) =>
    !/limit/i.test(c.allowance)
      ? undefined
      : /--limit|\blimit\s*[:=]\s*\d|\blimit of \d+(?!\s*(?:[\w-]+\s+)?(?:messages|requests|credits|prompts|calls|uses|runs|completions|interactions|queries|chats)\b)|\b(?:sub-?agent|thread|worker|process|tab|window|parallel|spawn|tool[- ]call|file|folder|directory|path|url|query|batch|page|row|column|field|title|description|body|buffer|cache|log|history|snapshot|checkpoint|settings?|config(?:uration)?)s? limit\b|\b\d+(?:\.\d+)?\s?(?:[kmgt]i?b|bytes?|lines|chars|characters|words)\b(?:(?![.!?]\s).){0,30}\blimit\b|\blimit\b(?:(?![.!?]\s).){0,30}\b\d+(?:\.\d+)?\s?(?:[kmgt]i?b|bytes?|lines|chars|characters|words)\b|\bconcurren\w*|\bsubagents?\b|\bdimension|\bimages?\b|\bapi rate limit\b|\bresults? limit\b|\blimit (?:for|on) (?:the )?(?:number|size|length|depth|count)\b|\bwatchers\b|\b(?:file[- ]?size|size|recursion|recursive|nesting|depth|memory|heap|stack|watch(?:er)?s?|inotify|line|character|char|output|time|turn|step|iteration|retry|retries|length|upload|attachment|payload|request size|concurrency|connection)s? limit\b|\bmax(?:imum)? (?:turns|steps|iterations|retries)\b/i.test(c.sentence)
        ? "another sense of \"limit\""
        : undefined,
  ),
];

const HOUR_MS = 3_600_000;
// a wait shorter than this is a throttle
const THROTTLE_MS = 300_000;
// a wait named in words a reset can be read from
const WAIT = /\b(?:in|after|for|wait)\s+\d/i;
// "in 0s": the allowance is back already
const ZERO_WAIT = /\b(?:in|after)\s+0+(?:\.0+)?\s*(?:ms|s|secs?|seconds?)\b/i;
const LONG_PERIOD = /\bper[ _-]?(?:day|week|month)\b|\b(?:daily|weekly|monthly)\b/i;
// the same in an API's quota ids: GenerateRequestsPerDayPerProjectPerModel
const LONG_PERIOD_ID = /(?<=[a-z])Per(?:Day|Week|Month)(?=[A-Z_\W]|$)/;
const PER_MINUTE = /(?:\b|_)per[ _-](?:minute|min|second|sec)(?:\b|_)|(?:rpm|tpm|rps)\b|\btokens per (?:minute|min)\b|\bnot (?:your|a) (?:usage )?limit\b|\bslow down\b/i;
const PER_MINUTE_ID = /(?<=[a-z])Per(?:Minute|Second)(?=[A-Z_\W]|$)/;
// a service saying when to try again, and an agent's own retry loop
const SERVER_RETRY = /\b(?:retry|try again|resubmit) (?:in|after)\b|\bretry[_-]?delay\b|\bretry-after\b|\bwait(?:ing)? (?:for )?\d/i;
const OWN_RETRY = /\b(?:retrying|will retry|backing off)\b|\battempt #?\d+\s*(?:\/|of)\s*\d+/i;
const THROTTLED = /\b(?:rate[- ]limited|throttled|too many requests)\b/i;
const THROTTLE_WORDS = /\brate[- ]?limit|\btoo many requests\b|\bthrottl/i;
const STRONG_ALLOWANCE = /\b(?:quotas?|credits?|usage|allowance|budget|balance|free|premium)\b|_/i;
// the agent says it goes on with another provider, model or account by itself
const ANOTHER_PROVIDER = /\b(?:next|another|fallback|backup|alternative|secondary) (?:\w+ )?(?:provider|account|key|endpoint)\b(?:(?![.!?]\s).){0,60}\b(?:will be used|is used|takes over|will take over|is being used)\b|\b(?:switching|falling back|failing over) to (?:the )?(?:next|another|fallback|backup) (?:\w+ )?(?:provider|account|key)\b/i;
// a person writing in the first person (a lower-case "i" only before a verb)
const PERSON = /(?:^|[^\w'])(?:I|I'm|I've|I'd|my)(?![\w'])|(?:^|[.!?]\s+)My\b|(?:^|\s)i (?:am|was|have|had|used|got|get|do|did|can|just|only|think|see|use|tried|paid|bought|still)\b/;
// how fast or how often it happens, said of the limit by someone who is not the agent
const REMARK = /\bafter (?:only|just) (?:\d|an? |one |two |three |a few )|\b(?:crazy|insanely|ridiculously|super|really|way too|too|so|very) (?:fast|quick(?:ly)?|soon|early|often)\b|\b(?:keeps?|kept|constantly|always|repeatedly) (?:hitting|reaching|getting|showing|saying|telling)\b|\bprematurely\b|\b(?:incorrectly|wrongly|erroneously|falsely)\b|\beven though\b|\bdespite\b/i;
// a Markdown list item with a bold label, or a quoted line in bold: a document about the wording
const MARKDOWN_ITEM = /^\s*(?:[-*+]|\d+[.)])\s+\*\*[^*]+\*\*|^\s*>\s*\*\*.+\*\*\s*$/;
// a budget or limit of the agent's own work, not of the account: per turn or step, for a workflow, a question, a
// container, a count in parentheses after it ("limit reached (5)")
const OWN_BUDGET = /\b(?:goal|turn|task|step|workflow|question|loop|iteration|thinking|reasoning|search|exploration|research|planning|tool[- ]?call|retry|time) budget\b|\bimage (?:generation|quota)\b|\blimit\s*=\s*\d|\bper (?:turn|step|task|run|iteration|loop|tool call)\b|\b(?:container|instance|sandbox|vm|pod|deployment|workspace|worktree|environment)s? limit\b|\blimit (?:reached|exceeded|hit)\s*\(\d+(?:\s*\/\s*\d+)?\)|\b\w+=\d+,\s*\w+=\d+/i;
// the agent says it goes on with what it has
const CARRIES_ON_ANYWAY = /\b(?:proceeding|continuing|carrying on) (?:with|without|anyway)\b/i;
// a search result as grep and its kind print one: path:line: then the line found
const SEARCH_RESULT = /^\s*(?:\.{1,2}\/)?[\w@.+-]+(?:\/[\w@.+-]+)*\.[A-Za-z0-9]{1,8}:\d+[:-]|^\s*[\w@.+-]+(?:\/[\w@.+-]+)+:\d+[:-]/;

// Where the line that holds a place of the block's text begins and ends in that text.
function lineAround(block: Block, at: number): { start: number; end: number } {
  let start = 0;
  for (const line of block.lines) {
    const end = start + line.text.length;
    if (at <= end) return { start, end };
    start = end + 1;
  }
  return { start: 0, end: block.text.length };
}

// The candidate's clause before its gone-word: from the last colon that ends an error's prefix ("stream error: …:
// You exceeded …") — what such a prefix says is not said of the allowance.
function clauseHead(c: Candidate): string {
  const head = c.sentence.slice(0, Math.max(0, c.sentence.toLowerCase().indexOf(c.gone.toLowerCase())));
  const colon = head.lastIndexOf(": ");
  return colon >= 0 ? head.slice(colon + 2) : head;
}

const switched = new WeakMap<ModelPatterns, RegExp>();
const switchedLater = new WeakMap<ModelPatterns, RegExp>();
const SWITCH_WORD = /switch|fell back|falling back|now using/i;

// The same said on the lines after the message, in plain words only ("Automatically switching from A to B"): an
// offer of another model on those lines stands beside the limit, not instead of it.
function switchedAfter(models: ModelPatterns): RegExp {
  let pattern = switchedLater.get(models);
  if (!pattern) {
    pattern = new RegExp(`(?<!\\b(?:to|try|consider|or|can|could|please|choose)\\s)\\b(?:switching|switched|falling back|fell back|now using)\\b(?:(?![.!?]\\s).){0,80}(?:${models.name}|\\bauto\\b)`, "iu");
    switchedLater.set(models, pattern);
  }
  return pattern;
}

// The agent says it changed model by itself: switching, falling back or now using a model it names.
function switchedModel(models: ModelPatterns): RegExp {
  let pattern = switched.get(models);
  if (!pattern) {
    const name = `(?:${models.name})`;
    pattern = new RegExp(
      `(?<!\\b(?:try|consider|or|can|could|please)\\s)\\b(?:switching|switched|falling back|fell back|fallback|will use|will be used|now using)\\b(?:(?![.!?]\\s).){0,80}(?:${name}|\\bauto\\b)|\\bswitching to \\w+ and continuing\\b|${name}(?:(?![.!?]\\s).){0,40}\\b(?:will be used|switched to|instead)\\b`,
      "iu",
    );
    switched.set(models, pattern);
  }
  return pattern;
}

// A block with a line of code in it, unless it is a JSON error body (whose punctuation is syntax).
function isSourceCode(block: Block): boolean {
  return !JSON_BODY.test(block.text) && block.lines.some((line) => looksLikeCode(line.raw));
}

// Code has punctuation prose does not: statement ends, braces, arrows, calls, diff and gutter marks, regexes.
function looksLikeCode(raw: string): boolean {
  const line = raw.trimEnd();
  return (
    /^\s*[+-]\s*(?:[\w$.]+\s*[(=]|["'`]|\/\/|#|[{}()])/.test(line) ||
    /^\s*@@/.test(line) ||
    /^\s*\d+\s*[│|]\s/.test(line) ||
    /[;{]\s*$/.test(line) ||
    /^\s*[})\]];?,?\s*$/.test(line) ||
    /=>|===|!==|&&|\|\||::|\b\w+\s*==\s*\S/.test(line) ||
    /\b(?:const|let|var)\s+[\w${[]+\s*[=:]|\b(?:def|function)\s+\w+\s*\(|\bthrow new\b|\braise \w+\(|\breturn\s*[({;'"`]|\bimport\s+(?:\{|\w+\s+from\b)|\bclass \w+\s*[:{(]/.test(line) ||
    /\b(?:console\.\w+|print|expect|assert\w*|describe|it|test|logger\.\w+|log\.\w+|fmt\.\w+|println!?)\(/.test(line) ||
    /\.(?:test|match|includes|startsWith|search|replace)\(/.test(line) ||
    /\\[bdswBDSW]|\(\?[:=!<]/.test(line) ||
    /^\s*```/.test(line) ||
    /^\s*[\w.]+\s*=\s*["'`]/.test(line) ||
    /^\s*case\s+["'\w]+\s*:/.test(line) ||
    /^\s*[\w.-]+\s*=\s*\\$/.test(line) ||
    /^\s*<\/?[a-z][\w-]*(?:\s[^>]*)?>\s*$/i.test(line)
  );
}

// How many seconds a duration at the start of a text stands for ("in 20s", "after 4h28m"), if it names one.
function secondsAfter(text: string): number | undefined {
  const match = /^\D{0,20}?((?:\d+(?:\.\d+)?\s*(?:ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)(?![a-z])\s*,?\s*)+)/i.exec(text);
  if (!match) return undefined;
  let seconds = 0;
  for (const part of match[1]!.matchAll(/(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)(?![a-z])/gi)) {
    const unit = part[2]!.toLowerCase();
    const scale = unit.startsWith("ms") || unit.startsWith("milli") ? 0.001 : unit.startsWith("s") ? 1 : unit.startsWith("m") ? 60 : unit.startsWith("h") ? 3600 : 86400;
    seconds += Number(part[1]) * scale;
  }
  return seconds;
}

// The candidate stands inside quotation marks, or is reported ("it says: …").
function isQuoted(c: Candidate): boolean {
  const index = c.block.text.toLowerCase().indexOf(c.phrase.toLowerCase());
  if (index < 0) return false;
  const head = c.block.text.slice(0, index);
  const tail = c.block.text.slice(index + c.phrase.length);
  const opened = [...head.matchAll(/["“`]|(?<![\p{L}\d])'/gu)].at(-1)?.index ?? -1;
  if (opened >= 0 && errorField(head.slice(0, opened))) return false;
  for (const [open, close] of [['"', '"'], ["`", "`"], ["“", "”"], ["«", "»"], ["‘", "’"]] as const) {
    const opens = open === close ? head.split(open).length - 1 : head.split(open).length - head.split(close).length;
    if (opens % 2 === 1 && tail.includes(close) && !errorField(head.slice(0, head.lastIndexOf(open))) && !wholeMessage(head, tail, open, close)) return true;
  }
  const singles = [...head.matchAll(/(?:^|[\s(\[:])'/g)].length - [...head.matchAll(/(?<=\S)'(?=[\s).,;:\]]|$)/g)].length;
  if (singles > 0 && /'(?:[\s).,;:\]]|$)/.test(tail)) return true;
  // reported: a word that introduces someone else's words stands just before it
  const own = c.sentence.slice(0, Math.max(0, c.phraseAt - c.at));
  return /\b(?:says?|said|shows?|showed|showing|printed|prints|displays?|displayed|messages?(?: is| was)?|banner|text|string|phrase|wording|e\.g\.|for example|such as|like|reads?|quote[sd]?)\s*:?\s*(?:[^\s.)]+\s+){0,3}$/i.test(
    own.slice(-60),
  );
}

// What stands before an opening quotation mark makes it an error's field, not someone quoting: nothing (the agent
// prints the error's string as it came), or a field's name ("Message: \"…\"").
function errorField(before: string): boolean {
  return /(?:^|[\s{,(\[])(?:message|error|detail|details|reason|msg|description|body)\s*[:=]\s*$/i.test(before);
}

// The quotation marks hold the whole block: the agent prints an error's string as it came.
function wholeMessage(head: string, tail: string, open: string, close: string): boolean {
  const opened = head.lastIndexOf(open);
  return /^\W*$/.test(head.slice(0, opened)) && head.indexOf(open) === opened && /^[\s.!)\]]*$/.test(tail.slice(tail.lastIndexOf(close) + 1)) && tail.indexOf(close) === tail.lastIndexOf(close);
}

// Marker glyphs before a message: bullets, spinner frames, prompt marks, borders.
const MARKS = new RegExp(`^(?:${MARKER}+\\s*)+`, "u");
const MARKED = new RegExp(`^\\s*(?:${MARKER}+\\s*)+`, "u");
// a line that begins with a marker glyph other than a border, or a dash (after a panel's border), begins a message
const MESSAGE_START = new RegExp(`^\\s*(?:[\\u2500-\\u257f]\\s*)?(?:(?![${BORDER}])${MARKER}|-)\\s`, "u");
// the same tests for a line of plain ASCII, where the only marker glyphs are > and *: most lines agents draw
const ASCII_MARKED = /^\s*[>*]/;
const ASCII_MESSAGE_START = /^\s*[>*-]\s/;
const startsMessage = (line: string): boolean => (/^[\x20-\x7e]*$/.test(line) ? ASCII_MESSAGE_START : MESSAGE_START).test(line);
const BLANK_OR_BORDER = new RegExp(`[\\s${BORDER}]`);

// Groups lines into messages as a person reads them: a message ends at a blank line, after a line that ended a
// sentence, or where a line begins with a bullet or marker; a phrase wrapped across lines is read whole. Only
// messages that could be a stop are cleaned (escape sequences, borders, bullets removed).
function splitBlocks(text: string, mayStop: (text: string) => boolean): Block[] {
  const rawLines = stripEscapes(text).split(/\r?\n|\r/);
  const groups: { first: number; raws: string[] }[] = [];
  let group: { first: number; raws: string[] } | undefined;
  rawLines.forEach((raw, index) => {
    const bare = trimEndOf(raw.replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, ""), BLANK_OR_BORDER);
    if (!bare.replace(/^[\s\u2500-\u257f]+/, "")) {
      group = undefined;
      return;
    }
    const previous = group?.raws[group.raws.length - 1];
    // a line ending in a parenthesis ends the message unless the next goes on in lower case (a wrapped sentence)
    if (group && previous !== undefined && (/[.!?]$/.test(previous) || (previous.endsWith(")") && !/^\s*[a-z]/.test(bare)) || startsMessage(bare))) group = undefined;
    if (!group) {
      group = { first: index, raws: [] };
      groups.push(group);
    }
    group.raws.push(bare);
  });
  const blocks: Block[] = [];
  for (const { first, raws } of groups) {
    if (!mayStop(raws.join(" "))) continue;
    const lines = raws.map((raw, index) => ({ raw, text: cleanLine(raw), index: first + index })).filter((line) => line.text);
    blocks.push(new DrawnBlock(lines.map((line) => line.text).join(" "), first, lines, raws, rawLines));
  }
  return blocks;
}

// A block as splitBlocks finds it: the lines around it are read only when a check asks for them.
class DrawnBlock implements Block {
  private priorRead: string[] | undefined;
  private afterRead: string | undefined;
  private messageRead: string | undefined;

  constructor(
    readonly text: string,
    readonly line: number,
    readonly lines: Block["lines"],
    readonly raws: string[],
    private readonly rawLines: readonly string[],
  ) {}

  get prior(): string[] {
    return (this.priorRead ??= priorLines(this.rawLines, this.line));
  }

  get after(): string {
    return (this.afterRead ??= followingLines(this.rawLines, this.line + this.raws.length));
  }

  get message(): string {
    return (this.messageRead ??= this.after ? `${this.text} ${this.after}` : this.text);
  }
}

const PRIOR_LINES = 6;

// The lines above a block up to a blank line, nearest last.
function priorLines(rawLines: readonly string[], first: number): string[] {
  const lines: string[] = [];
  for (let index = first - 1; index >= 0 && lines.length < PRIOR_LINES && rawLines[index]!.trim(); index--) lines.unshift(rawLines[index]!);
  return lines;
}

const AFTER_LINES = 12;
const AFTER_CHARS = 1200;

// The lines of the same message after a block: up to a blank line, or past one when the paragraph ends in a colon
// (a list of options follows), at most AFTER_LINES lines and AFTER_CHARS characters.
function followingLines(rawLines: readonly string[], from: number): string {
  const parts: string[] = [];
  let size = 0;
  let previous = from > 0 ? rawLines[from - 1]!.trimEnd() : "";
  for (let index = from; index < rawLines.length && parts.length < AFTER_LINES && size < AFTER_CHARS; index++) {
    // only what a test of words needs: the line's own blanks and borders off, not its marker glyphs
    const text = trimEndOf(rawLines[index]!, BLANK_OR_BORDER).replace(/^[\s\u2500-\u257f]+/, "");
    if (!text) {
      if (!previous.endsWith(":")) break;
      previous = "";
      continue;
    }
    parts.push(text);
    size += text.length + 1;
    previous = text;
  }
  return parts.join(" ").replace(/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g, "").slice(0, AFTER_CHARS);
}

function cleanLine(raw: string): string {
  // plain ASCII text needs no more than its spaces tidied
  // (of ASCII, only > and * are marker glyphs: the cheap test says what MARKED would)
  if (/^[\x20-\x7e]*$/.test(raw) && !ASCII_MARKED.test(raw)) return raw.replace(/\s+/g, " ").trim();
  // its blanks and borders at the end are off already
  return raw
    .replace(MARKED, "")
    .replace(/[’‘]/g, "'")
    .replace(/\s+/g, " ")
    .trim();
}

// A text without the run of characters at its end that each pass the test, found from the end: a regular expression
// anchored at the end would retry at every character of a long run.
function trimEndOf(text: string, char: RegExp): string {
  let end = text.length;
  while (end > 0 && char.test(text[end - 1]!)) end--;
  return text.slice(0, end);
}
