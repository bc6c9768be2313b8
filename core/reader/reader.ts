import { stripEscapes } from "../base/ansi.js";
import { ALLOWANCE_CODES, ALLOWANCE_ERROR_NAMES, CREDIT_CODES, OVERLOADED_STATUSES } from "./error-codes.js";
import { BORDER, MARKER } from "./glyphs.js";
import { modelPatterns, type ModelPatterns } from "./model-names.js";
import { parseResetTime } from "./reset-time.js";

// The general reader: tells text that says a usage allowance is gone from everything else. Pure: no I/O, and the
// clock and time zone come in with the options. It keeps no list of sentences: it looks for a word that says an
// allowance is gone next to a word that names one, then weighs what stands around them.

export type LimitKind = "session" | "weekly" | "daily" | "monthly" | "per-model" | "credits" | "unknown";

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
const GONE = /\b(?:hit|hitting|reached|exceeded|exhausted|depleted|maxed out|used up|(?:ran|run|running|are|is|be) out of|out of|surpassed|no (?:more )?(?:\w+ ){0,2}(?:left|remaining)|insufficient|exceeds?|used (?:\d{1,3}(?:\.\d+)?\s?%|all|up all)(?: of)?|(?:have|has|with) no|not enough|(?:is |are )?too low|(?:does not|doesn't|do not|don't) have|(?:is |are )?(?:now )?paused|(?<=(?:'ve|have|has) )used|(?:is |are )?at (?:its|your|the) (?:\w+ )?limit)(?=\W|$)/g;
const ALLOWANCE = /\b(?:limits?|quotas?|credits?|usage|allowance|spend(?:ing)? (?:cap|limit)|budget|balance|premium requests?|requests|messages|free (?:trial|tier|plan))\b/g;
const CODES = new RegExp(`\\b(?:${[...ALLOWANCE_CODES.map(literal), ALLOWANCE_ERROR_NAMES].join("|")})\\b`, "i");
// HTTP 429 or 402 as an error reports it, not a number in a sentence
const STATUS = /(?:\b(?:http|error|status|code|api error)\W{0,3}|^\W*)(?:429|402)\b|\b(?:429|402)\s*(?:[:({[]|too many|payment required)/i;
// "add credits to continue": the allowance is gone even when no word says so
const TO_CONTINUE = /\b(?:add|purchase|buy|top up)\s+(?:more\s+)?(?:\w+\s+)?credits\b(?:(?![.!?]\s).){0,40}\bto (?:continue|keep using|keep going)\b|\bto (?:continue|keep using)\b(?:(?![.!?]\s).){0,40}\b(?:add|purchase|buy|top up)\s+(?:more\s+)?(?:\w+\s+)?credits\b|\bno (?:paid |more )?(?:\w+ )?(?:usage|credits?|quota) (?:is |are )?available\b/i;
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
}

interface Block {
  text: string;
  // the index of its first line in the text given
  line: number;
  // each with its index in the text given
  lines: { raw: string; text: string; index: number }[];
  // every line as drawn, those that clean to nothing too
  raws: string[];
}

// Words without which no text can be a stop: most output is ruled out by this one test.
const MAYBE = /limit|quota|credit|usage|allowance|budget|balance|requests|messages|spend|free|exhaust|429|402/i;

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

const LIMIT_KINDS: readonly string[] = ["session", "weekly", "daily", "monthly", "per-model", "credits", "unknown"];

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
  const found = candidate.byCode
    ? `an error code says the allowance is gone ("${candidate.phrase}")`
    : candidate.byPhrase
      ? `the provider's limit phrase matches ("${candidate.phrase}")`
      : `"${candidate.phrase}" is about an allowance running out`;
  const kind = kindOf(block.text, candidate);
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
  const reset = parseResetTime(block.text, options);
  const untilReset = reset ? reset.at.getTime() - options.now.getTime() : undefined;
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
  const sentences = block.text.split(/(?<=[.!?])\s+(?=[A-Z/"'(])|\s+[·∙•|]\s+/);
  let offset = 0;
  const candidates: Candidate[] = [];
  for (const sentence of sentences) {
    const at = block.text.indexOf(sentence, offset);
    offset = at + sentence.length;
    const before = block.text.slice(0, at);
    const lower = sentence.toLowerCase();
    const code =
      CODES.exec(sentence) ??
      TO_CONTINUE.exec(sentence) ??
      (STATUS.test(sentence) && /\b(?:quota|plan|billing|credits?|usage limit|subscription)\b/i.test(block.text) ? STATUS.exec(sentence) : null);
    if (code) candidates.push({ block, models, sentence, at, phraseAt: at + code.index, before, gone: code[0], allowance: code[0], phrase: code[0], byCode: true, byPhrase: false });
    for (const phrase of options.phrases ?? []) {
      const match = phrase.exec(sentence);
      if (match) candidates.push({ block, models, sentence, at, phraseAt: at + match.index, before, gone: match[0], allowance: match[0], phrase: match[0], byCode: false, byPhrase: true });
    }
    const pair = MAYBE.test(sentence) ? nearestPair(lower) : undefined;
    if (pair) {
      const phrase = sentence.slice(pair.start, pair.end);
      candidates.push({ block, models, sentence, at, phraseAt: at + pair.start, before, gone: pair.gone, allowance: pair.allowance, phrase, byCode: false, byPhrase: false });
    }
  }
  return candidates.find((c) => c.byPhrase) ?? candidates.find((c) => c.byCode) ?? candidates[0];
}

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
    const text = c.block.text;
    if (/\bper[ _-]?(?:day|week|month)\b|\b(?:daily|weekly|monthly)\b/i.test(text)) return undefined;
    const perMinute = /(?:\b|_)per[ _-](?:minute|min|second|sec)(?:\b|_)|(?:rpm|tpm|rps)\b|\btokens per (?:minute|min)\b|\bnot (?:your|a) (?:usage )?limit\b|\bslow down\b/i.test(text);
    const retry = /\b(?:retrying|will retry|retry(?:ing)? (?:in|after)|try again in|backing off)\b/i.exec(text);
    const wait = retry ? secondsAfter(text.slice(retry.index)) : undefined;
    return perMinute || (retry && (wait === undefined || wait < 300)) ? "a rate limit per minute or a throttle that retries" : undefined;
  }),
  check((c) =>
    OVERLOADED.test(c.block.text)
      ? "a service overloaded for a while"
      : undefined,
  ),
  check((c) =>
    /\b(?:context(?: window| length| limit| size)?|prompt is too long|too many (?:input )?tokens|max(?:imum)? (?:context|tokens|output tokens)|max_tokens|conversation (?:is )?too long|auto-?compact\w*|compacting)\b/i.test(c.sentence) ||
    (/\btoken limit\b/i.test(c.sentence) && !/\b(?:daily|weekly|monthly|resets?|plan)\b/i.test(c.block.text))
      ? "a context window that is full, not an allowance"
      : undefined,
  ),
  check((c) =>
    switchedModel(c.models).test(c.block.text) &&
    !/\bcontinuing automatically at\b/i.test(c.block.text)
      ? "the agent switched model by itself and carries on"
      : undefined,
  ),
  check((c) => (/\b(?:possible|possibly)\b/i.test(c.block.text) ? "a guess at a cause, not a notice" : undefined)),
  check((c) => (/\?\s*$/.test(c.sentence.trim()) || /^\s*(?:how|what|why|when|can|could|did|do|does|is|are|will|should)\b[^.!]*$/i.test(c.sentence) ? "a question" : undefined)),
  check((c) => {
    const head = c.sentence.slice(0, Math.max(0, c.sentence.toLowerCase().indexOf(c.gone.toLowerCase())));
    return /\b(?:if|when|whenever|once|unless|in case|until|would|could|might|should|what happens|how to|avoid|prevent|in order to|so that|before|possible|possibly|perhaps|maybe|probably|likely)\b/i.test(head)
      ? "a condition or a possibility, not a notice"
      : undefined;
  }),
  check((c) => {
    const head = c.sentence.slice(0, Math.max(0, c.sentence.toLowerCase().indexOf(c.gone.toLowerCase())));
    return /\b(?:not|never|no longer|haven't|hasn't|didn't|won't|isn't|aren't|don't|doesn't|without)\s+(?:\w+\s+){0,2}$/i.test(head) ? "it says the opposite" : undefined;
  }),
  check((c) => (isSourceCode(c.block) ? "source code" : undefined)),
  check((c) => (!JSON_BODY.test(c.block.text) && isQuoted(c) ? "a quotation, not a notice" : undefined)),
  check((c) =>
    c.block.lines.some((line) => /^\s*(?:--?[a-z][\w-]*[ ,=]|usage:|options:|commands:|examples?:|#{1,6} |\|.*\|\s*$|note:|tip:|\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}|\[?(?:debug|info|warn|warning|trace)\]?[: ])/i.test(line.raw))
      ? "documentation, help text or a log line"
      : undefined,
  ),
  check((c) =>
    // the bar as drawn: a bar at the start of a line is taken off its text with the marker glyphs
    c.block.raws.some((raw) => /[█▓▒░■□▮▯▰▱]{3,}/.test(raw)) || /\b\d{1,3}(?:\.\d+)?\s?% (?:used|left|remaining)\b/i.test(c.block.text)
      ? "a usage meter"
      : undefined,
  ),
  check((c) => (/\b(?:goal|turn|task|step) budget\b|\bimage (?:generation|quota)\b|\blimit\s*=\s*\d/i.test(c.block.text) ? "another sense of \"limit\"" : undefined)),
  check((c) =>
    !/limit/i.test(c.allowance)
      ? undefined
      : /--limit|\blimit\s*[:=]\s*\d|\blimit of \d+|\bconcurren\w*|\bsubagents?\b|\bdimension|\bimages?\b|\bapi rate limit\b|\bresults? limit\b|\blimit (?:for|on) (?:the )?(?:number|size|length|depth|count)\b|\bwatchers\b|\b(?:file[- ]?size|size|recursion|recursive|nesting|depth|memory|heap|stack|watch(?:er)?s?|inotify|line|character|char|output|time|turn|step|iteration|retry|retries|length|upload|attachment|payload|request size|concurrency|connection)s? limit\b|\bmax(?:imum)? (?:turns|steps|iterations|retries)\b/i.test(c.sentence)
        ? "another sense of \"limit\""
        : undefined,
  ),
];

const switched = new WeakMap<ModelPatterns, RegExp>();

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
    /^\s*case\s+["'\w]+\s*:/.test(line)
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
  for (const [open, close] of [['"', '"'], ["`", "`"], ["“", "”"], ["«", "»"], ["‘", "’"]] as const) {
    const opens = open === close ? head.split(open).length - 1 : head.split(open).length - head.split(close).length;
    if (opens % 2 === 1 && tail.includes(close)) return true;
  }
  const singles = [...head.matchAll(/(?:^|[\s(\[:])'/g)].length - [...head.matchAll(/(?<=\S)'(?=[\s).,;:\]]|$)/g)].length;
  if (singles > 0 && /'(?:[\s).,;:\]]|$)/.test(tail)) return true;
  // reported: a word that introduces someone else's words stands just before it
  return /\b(?:says?|said|shows?|showed|showing|printed|prints|displays?|displayed|messages?(?: is| was)?|banner|text|string|phrase|wording|e\.g\.|for example|such as|like|reads?|quote[sd]?)\s*:?\s*(?:[^\s.)]+\s+){0,3}$/i.test(
    head.slice(-60),
  );
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
    if (group && previous !== undefined && (/[.!?)]$/.test(previous) || startsMessage(bare))) group = undefined;
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
    blocks.push({ text: lines.map((line) => line.text).join(" "), line: first, lines, raws });
  }
  return blocks;
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
