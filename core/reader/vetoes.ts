import { lineAround, type Block } from "./blocks.js";
import { OVERLOADED_STATUSES } from "./error-codes.js";
import { foreignVeto, type ForeignPair } from "./languages.js";
import type { ModelPatterns } from "./model-names.js";
import { literal } from "./phrases.js";
import { parseResetTime, type ResetContext, type ResetTime } from "./reset-time.js";

// Why a text that has the words of a gone allowance is not the notice of one: each check looks at one candidate
// (the sentence, its block, the lines after it, when its allowance returns) and says why not, or nothing.

// a JSON error body: its quotation marks are syntax, not someone quoting a message
const JSON_BODY = /[{,]\s*["']?(?:message|error|type|code|status)["']?\s*:/;

export interface Check {
  test(context: Candidate): string | undefined;
}

export interface Candidate {
  block: Block;
  models: ModelPatterns;
  sentence: string;
  // where the sentence and the phrase begin in the block's text
  at: number;
  phraseAt: number;
  gone: string;
  allowance: string;
  phrase: string;
  byCode: boolean;
  byPhrase: boolean;
  // the wording says the account itself has no allowance (a plan without usage, a subscription inactive)
  account: boolean;
  // found in another language's words (see languages.ts): where its pair stands in the sentence
  foreign?: ForeignPair;
  // found only by a request being throttled ("rate-limited", "too many requests"): a stop when the wait is hours
  throttled?: boolean;
  // when the allowance returns, read the first time a check asks (reading it costs more than most checks): see
  // timing()
  read?: Timing;
  options?: ResetContext;
}

export interface Timing {
  reset: ResetTime | undefined;
  // how long until the allowance returns, when the message says (0 for "in 0s")
  untilReset: number | undefined;
  // whether that time was given as a wait ("in 56s", "after 2h") rather than as a clock time or a date
  waited: boolean;
  // whether that wait is the agent's own retry ("retrying in 29s"), not the service's
  ownRetry: boolean;
}

// A candidate's timing, read once.
export function timing(c: Candidate): Timing {
  return (c.read ??= timingOf(c.block, c.options!));
}

// The reset, in the block or on the lines of the message after it, and what kind of time it is.
function timingOf(block: Block, options: ResetContext): Timing {
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

const check = (test: (c: Candidate) => string | undefined): Check => ({ test });

const OVERLOADED = new RegExp(
  `\\b(?:${OVERLOADED_STATUSES.map(literal).join("|")}|overloaded|high (?:load|demand|traffic)|at capacity|capacity constraints?|temporarily unavailable|service unavailable|server (?:is )?busy|experiencing high)\\b`,
  "i",
);

// Each returns why a candidate is not a stop, or undefined.
export const VETOES: Check[] = [
  check((c) => (c.foreign ? foreignVeto(c.sentence, c.foreign) : undefined)),
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
    const soon = SOON.test(text);
    if (!perMinute && !server && !own && !soon && !WAIT.test(text)) return undefined;
    const { untilReset, waited, ownRetry } = timing(c);
    if (untilReset !== undefined && untilReset >= HOUR_MS) return undefined;
    if (LONG_PERIOD.test(text) || (text.includes("Per") && LONG_PERIOD_ID.test(text))) return undefined;
    const why = "a rate limit per minute or a throttle that retries";
    if (perMinute) return why;
    // a rate limit that asks for a moment's wait, with no period named ("this limit resets each session" is one)
    if (soon && THROTTLE_WORDS.test(c.sentence) && !/\bsession\b|\b5[- ]?hours?\b/i.test(text)) return why;
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
  check((c) => (REMARK.test(c.sentence) || NARRATIVE.test(c.block.text) ? "a remark about the limit, not the notice" : undefined)),
  check((c) => {
    // someone telling what happened to them, or asking about it, and quoting the message as they go
    const head = c.sentence.slice(0, Math.max(0, c.sentence.toLowerCase().indexOf(c.gone.toLowerCase())));
    if (/(?:^|[^\w'])(?:I|I'm|I've|I'd|my|me)\b/.test(head) && !/\b(?:you|your|you've|you're)\b/i.test(c.sentence)) return "someone telling of the limit, not the notice";
    // another sentence on the message's own line in the first person: a person writing about it (a line above, an
    // answer that ends "… my plan:", is the agent's own)
    const line = lineAround(c.block, c.phraseAt);
    const others = c.block.text.slice(line.start, c.phraseAt) + " " + c.block.text.slice(c.phraseAt + c.phrase.length, line.end);
    if (PERSON.test(others) && !/\b(?:sorry|apologi[sz]e)\b/i.test(others)) return "someone writing about the limit, not the notice";
    // someone calling on others by name, as people do in an issue thread
    if (/(?:^|\s)@[A-Za-z0-9][\w-]+(?=[\s,.?!]|$)/.test(c.block.text)) return "someone writing about the limit, not the notice";
    const asked = c.block.text.slice(0, c.at);
    return /(?:^|[.!?]\s)(?:[^.!?]*\b(?:I|my|me|we|anyone|why|how come)\b[^.!?]*)\?\s*["“']?\s*$/i.test(asked) ? "a question that quotes the message" : undefined;
  }),
  check((c) =>
    /\b(?:context(?: window| length| limit| size)?|prompt is too long|too many (?:input )?tokens(?! per (?:day|week|month))|max(?:imum)? (?:context|tokens|output tokens)|max_tokens|conversation (?:is )?too long|auto-?compact\w*|compacting)\b/i.test(c.sentence) ||
    (/\btoken limit\b/i.test(c.sentence) && !/\b(?:daily|weekly|monthly|resets?|plan)\b|\bper (?:day|week|month)\b/i.test(c.block.text))
      ? // a request the balance can pay no token of is the balance gone, whatever it asked for
        /\bcan only afford 0\b/i.test(c.block.text) ? undefined : "a context window that is full, not an allowance"
      : undefined,
  ),
  check((c) =>
    (switchedModel(c.models).test(c.block.text) || (SWITCH_WORD.test(c.block.after) && switchedAfter(c.models).test(c.block.after))) &&
    !/\bcontinuing automatically at\b/i.test(c.block.text)
      ? "the agent switched model by itself and carries on"
      : undefined,
  ),
  check((c) => {
    const guess = /\b(?:possible|possibly|most likely|probably|perhaps)\b/i.exec(c.block.text);
    // a guess at why an account is in its state leaves the state as it is
    if (!guess || (c.account && guess.index > c.phraseAt)) return undefined;
    return "a guess at a cause, not a notice";
  }),
  check((c) => (/\?\s*$/.test(c.sentence.trim()) || /^\s*(?:how|what|why|when|can|could|did|do|does|is|are|will|should)\b[^.!]*$/i.test(c.sentence) ? "a question" : undefined)),
  check((c) => {
    const head = clauseHead(c);
    return /\b(?:if|when|whenever|once|unless|in case|until|would|could|might|may|should|what happens|how to|avoid|prevent|in order to|so that|before|possible|possibly|perhaps|maybe|probably|likely)\b/i.test(head)
      ? "a condition or a possibility, not a notice"
      : undefined;
  }),
  check((c) => {
    const head = clauseHead(c);
    return /\b(?:not|never|no longer|haven't|hasn't|didn't|won't|isn't|aren't|don't|doesn't|without)\s+(?:\w+\s+){0,2}$|(?:不再|不会|不會|没有|沒有)\S{0,4}\s*$/i.test(head) ? "it says the opposite" : undefined;
  }),
  check((c) => (isSourceCode(c.block) ? "source code" : undefined)),
  check((c) => (!JSON_BODY.test(c.block.text) && isQuoted(c) ? "a quotation, not a notice" : undefined)),
  check((c) =>
    [...c.block.prior, ...c.block.lines.map((line) => line.raw)].some((raw) => MARKDOWN_ITEM.test(raw)) ||
    EXPLAINED.test(c.block.message) ||
    c.block.lines.some((line) => /^\s*(?:\[(?:bug|feature(?: request)?|question|enhancement)\]\s|--?[a-z][\w-]*[ ,=]|usage:|options:|commands:|examples?:|#{1,6} |\|.*\|\s*$|note:|tip:|\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}|\[?(?:debug|info|warn|warning|trace)\]?[: ]|\*\*[^*]+\*\*\s*[:—–-]\s)/i.test(line.raw) || SEARCH_RESULT.test(line.raw))
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
    // a limit over a day or more ("TPD rate limit, … limit: 1500000") is an allowance, whatever numbers stand by it
    !/limit/i.test(c.allowance) || LONG_PERIOD.test(c.sentence)
      ? undefined
      : /--limit|\blimit\s*[:=]\s*\d|\blimit of \d+(?![\d,.])(?!\s*(?:[\w-]+\s+)?(?:messages|requests|credits|prompts|calls|uses|runs|completions|interactions|queries|chats)\b)|\b(?:sub-?agent|thread|worker|job|activation|device|install(?:ation)?|process|tab|window|parallel|spawn|tool[- ]call|file|folder|directory|path|url|query|batch|page|row|column|field|title|description|body|buffer|cache|log|history|snapshot|checkpoint|settings?|config(?:uration)?)s? limit\b|\b\d+(?:\.\d+)?\s?(?:[kmgt]i?b|bytes?|lines|chars|characters|words)\b(?:(?![.!?]\s).){0,30}\blimit\b|\blimit\b(?:(?![.!?]\s).){0,30}\b\d+(?:\.\d+)?\s?(?:[kmgt]i?b|bytes?|lines|chars|characters|words)\b|\bconcurren\w*|\bsubagents?\b|\bdimension|\bimages?\b|\bapi rate limit\b|\bresults? limit\b|\blimit (?:for|on) (?:the )?(?:number|size|length|depth|count)\b|\bwatchers\b|\b(?:file[- ]?size|size|recursion|recursive|nesting|depth|memory|heap|stack|watch(?:er)?s?|inotify|line|character|char|output|time|turn|step|iteration|retry|retries|length|upload|attachment|payload|request size|concurrency|connection)s? limit\b|\bmax(?:imum)? (?:turns|steps|iterations|retries)\b/i.test(c.sentence)
        ? "another sense of \"limit\""
        : undefined,
  ),
];

export const HOUR_MS = 3_600_000;
// a wait shorter than this is a throttle
export const THROTTLE_MS = 300_000;
// a wait of a moment in words: "wait a bit", "try again shortly"
const SOON = /\b(?:wait|try again|retry)\b(?:\s+\w+){0,2}?\s+(?:a (?:bit|moment|little|minute|second|few (?:seconds|minutes))|shortly|momentarily)\b|\b(?:try again|retry) later\b|\bwait before (?:trying|retrying)\b/i;
// a wait named in words a reset can be read from
const WAIT = /\b(?:in|after|for|wait)\s+\d/i;
// "in 0s": the allowance is back already
const ZERO_WAIT = /\b(?:in|after)\s+0+(?:\.0+)?\s*(?:ms|s|secs?|seconds?)\b/i;
const LONG_PERIOD = /\bper[ _-]?(?:day|week|month)\b|\b(?:daily|weekly|monthly)\b|(?:\b|_)(?:rpd|tpd)\b/i;
// the same in an API's quota ids: GenerateRequestsPerDayPerProjectPerModel
const LONG_PERIOD_ID = /(?<=[a-z])Per(?:Day|Week|Month)(?=[A-Z_\W]|$)/;
const PER_MINUTE = /(?:\b|_)per[ _-](?:minute|min|second|sec)(?:\b|_)|(?:rpm|tpm|rps)\b|\btokens per (?:minute|min)\b|\bnot (?:your|a) (?:usage )?limit\b|\bslow down\b/i;
const PER_MINUTE_ID = /(?<=[a-z])Per(?:Minute|Second)(?=[A-Z_\W]|$)/;
// a service saying when to try again, and an agent's own retry loop
const SERVER_RETRY = /\b(?:retry|try again|resubmit) (?:in|after)\b|\bretry[_-]?delay\b|\bretry-after\b|\bwait(?:ing)? (?:for )?\d/i;
const OWN_RETRY = /\b(?:retrying|will retry|backing off)\b|\battempt #?\d+\s*(?:\/|of)\s*\d+/i;
const THROTTLE_WORDS = /\brate[- ]?limit|\btoo many requests\b|\bthrottl/i;
const STRONG_ALLOWANCE = /\b(?:quotas?|credits?|usage|allowance|budget|balance|free|premium)\b|_/i;
// the agent says it goes on with another provider, model or account by itself
const ANOTHER_PROVIDER = /\b(?:trying|using|use|try|switching to|falling back to) (?:the |an? )?(?:\w+ )?(?:fallback|backup|alternative)\b|\b(?:trying|using) (?:an?other|other|the next|a different) (?:\w+ )?(?:models?|providers?|accounts?|keys?)\b|\b(?:next|another|fallback|backup|alternative|secondary) (?:\w+ )?(?:provider|account|key|endpoint)\b(?:(?![.!?]\s).){0,60}\b(?:will be used|is used|takes over|will take over|is being used)\b|\b(?:switching|falling back|failing over) to (?:the )?(?:next|another|fallback|backup) (?:\w+ )?(?:provider|account|key)\b/i;
// a person writing in the first person (a lower-case "i" only before a verb)
const PERSON = /(?:^|[^\w'])(?:I|I'm|I've|I'd|my)(?![\w'])|(?:^|[.!?]\s+)My\b|(?:^|\s)i (?:am|was|have|had|used|got|get|do|did|can|just|only|think|see|use|tried|paid|bought|still)\b/;
// how fast or how often it happens, said of the limit by someone who is not the agent
// a story of what happened, told afterwards
const NARRATIVE = /\b\d+ (?:days?|hours?|weeks?|minutes?) later\b|\b(?:is|was|are|were) still (?:blocked|there|showing|happening)\b/i;
const REMARK = /\bafter (?:only|just) (?:~?\d|an? |one |two |three |a few )|\bnot (?:parsed|detected|recognized|recognised|handled|caught)\b|\b(?:crazy|insanely|ridiculously|super|really|way too|too|so|very) (?:fast|quick(?:ly)?|soon|early|often)\b|\b(?:keeps?|kept|constantly|always|repeatedly) (?:hitting|reaching|getting|showing|saying|telling)\b|\bprematurely\b|\bat times\b|\bsometimes\b|\b(?:incorrectly|wrongly|erroneously|falsely)\b|\beven though\b|\bdespite\b/i;
// a help page explaining an error: what it indicates, its cause and its resolution
const EXPLAINED = /\bthis (?:indicates|means|happens|occurs|error (?:means|occurs|indicates|appears))\b|\b(?:it|this|that) (?:just |simply |only )?means\b|\bthis (?:pr|pull request|commit|change|release) (?:hides|adds|removes|changes|fixes|makes|updates)\b|(?:^|\s)(?:resolution|solution|cause|symptoms?|workaround|explanation):\s|\b(?:may|can|could|might)(?: also)? mean\b|\b\w+ means (?:that )?(?:you|no|your|there)\b|\bnothing to do with\b|\bnot a bug\b|\bexpected behaviou?r\b|\bnot an error\b|^\W*(?:hi|hello|hey)\b[,!]\s+\w/i;
// a Markdown list item with a bold label, or a quoted line in bold: a document about the wording
const MARKDOWN_ITEM = /^\s*(?:[-*+]|\d+[.)])\s+\*\*[^*]+\*\*|^\s*>\s*\*\*.+\*\*\s*$/;
// a budget or limit of the agent's own work, not of the account: per turn or step, for a workflow, a question, a
// container, a count in parentheses after it ("limit reached (5)")
const OWN_BUDGET = /\b(?:disk|storage|file ?system|inode)s? quota\b|\berrno\b|\b(?:goal|turn|task|step|workflow|question|loop|iteration|thinking|reasoning|search|exploration|research|planning|tool[- ]?call|retry|time) budget\b|\bimage (?:generation|quota)\b|\blimit\s*=\s*\d|\bper (?:turn|step|task|run|iteration|loop|tool call)\b|\b(?:container|instance|sandbox|vm|pod|deployment|workspace|worktree|environment)s? limit\b|\blimit (?:reached|exceeded|hit)\s*\(\d+(?:\s*\/\s*\d+)?\)|\b\w+=\d+,\s*\w+=\d+/i;
// the agent says it goes on with what it has
const CARRIES_ON_ANYWAY = /\b(?:proceeding|continuing|carrying on) (?:with|without|anyway)\b|\byou can (?:still )?continue (?:using|with|to use)\b/i;
// a search result as grep and its kind print one: path:line: then the line found
const SEARCH_RESULT = /^\s*(?:\.{1,2}\/)?[\w@.+-]+(?:\/[\w@.+-]+)*\.[A-Za-z0-9]{1,8}:\d+[:-]|^\s*[\w@.+-]+(?:\/[\w@.+-]+)+:\d+[:-]/;

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
export function isSourceCode(block: Block): boolean {
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
