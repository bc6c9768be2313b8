import { monthOf, readClock, readZone, type Clock } from "./date-words.js";
import { instantIn, isRealDate, localWall } from "./wall-clock.js";

// Dates as the user's locale prints them: a day before a month's name ("3 de mar. de 2027, 08:15", "10. Juli 2026
// um 11:52", "10 juil. 2026"), Chinese and Japanese dates ("2026年7月10日 11:52", "7月10日 下午3:00"), and numeric
// dates ("10/07/2026, 11:52", "10.07.26", "2026/7/10", "10/07, 11:52"), whose order of day and month the locale decides where the
// numbers leave it open. Pure: the clock, the zone and the locale come in.

export interface DateContext {
  now: Date;
  timeZone: string;
  // a BCP 47 tag such as "de-DE"; without one a numeric date that could be day-month or month-day names no instant
  locale?: string;
}

// One date found in a text: the instant it names, or undefined when it names none after now (it has passed, it does
// not exist, or its order of day and month cannot be told), and where it stands.
export interface FoundDate {
  at: number | undefined;
  start: number;
  end: number;
}

// Every date the text prints in one of these shapes, in the order they stand; one without a time only after a word
// that says something happens then ("resets on", "until", "ends on").
export function findLocalDates(text: string, context: DateContext): FoundDate[] {
  const found: FoundDate[] = [];
  for (const m of text.matchAll(NAMED)) {
    const month = monthOf(m[2]!);
    if (month === undefined) continue;
    add(found, text, context, m, { year: m[3] ? Number(m[3]) : undefined, month, day: Number(m[1]) });
  }
  for (const m of text.matchAll(CJK)) {
    add(found, text, context, m, { year: m[1] ? Number(m[1]) : undefined, month: Number(m[2]) - 1, day: Number(m[3]) });
  }
  for (const m of text.matchAll(YEAR_FIRST)) {
    add(found, text, context, m, { year: Number(m[1]), month: Number(m[3]) - 1, day: Number(m[4]) });
  }
  for (const m of text.matchAll(YEAR_LAST)) {
    const order = dateOrder(context.locale);
    // "26/07/10" where the locale puts the year first
    if (order === "ymd" && m[1]!.length === 2 && m[4]!.length === 2) {
      add(found, text, context, m, { year: 2000 + Number(m[1]), month: Number(m[3]) - 1, day: Number(m[4]) });
      continue;
    }
    const year = m[4]!.length === 2 ? 2000 + Number(m[4]) : Number(m[4]);
    add(found, text, context, m, numericDate(year, Number(m[1]), Number(m[3]), context.locale));
  }
  for (const m of text.matchAll(NO_YEAR)) {
    add(found, text, context, m, numericDate(undefined, Number(m[1]), Number(m[3]), context.locale), true);
  }
  return found.sort((a, b) => a.start - b.start);
}

// Whether a numeric date a/b is day-month or month-day: the numbers decide when one of them is over 12, else the
// locale's own order of day and month, else it is left open.
export function numericOrder(first: number, second: number, locale: string | undefined): "day-month" | "month-day" | undefined {
  if (first > 12 && second <= 12) return "day-month";
  if (second > 12 && first <= 12) return "month-day";
  if (first > 12 || second > 12) return undefined;
  if (first === second) return "day-month";
  const order = dateOrder(locale);
  return order === undefined ? undefined : order === "dmy" ? "day-month" : "month-day";
}

// The order in which a locale writes a date's year, month and day, as its own numeric dates show ("ymd", "dmy",
// "mdy"); undefined without a locale or for one the runtime does not know.
export function dateOrder(locale: string | undefined): "ymd" | "dmy" | "mdy" | undefined {
  if (!locale) return undefined;
  if (ORDERS.has(locale)) return ORDERS.get(locale);
  let order: "ymd" | "dmy" | "mdy" | undefined;
  try {
    if (Intl.DateTimeFormat.supportedLocalesOf([locale]).length) {
      const types = new Intl.DateTimeFormat(locale, { year: "numeric", month: "numeric", day: "numeric", timeZone: "UTC" })
        .formatToParts(new Date(Date.UTC(2026, 10, 30)))
        .map((part) => part.type);
      const [year, month, day] = [types.indexOf("year"), types.indexOf("month"), types.indexOf("day")];
      if (year >= 0 && month >= 0 && day >= 0) order = year < month ? "ymd" : day < month ? "dmy" : "mdy";
    }
  } catch {
    order = undefined;
  }
  ORDERS.set(locale, order);
  return order;
}

// --- internal ---

const ORDERS = new Map<string, "ymd" | "dmy" | "mdy" | undefined>();

// "3 de mar. de 2027", "10. Juli 2026", "1er janvier", "10 July 2026", "5th of May": a day, then a word (a month's
// name when monthOf says so), then perhaps a year
const NAMED = /(?<![\p{L}\p{N}.,/:-])(\d{1,2})(?:\.|º|°|er|st|nd|rd|th)?\s*(?:de\s+|of\s+)?(\p{L}{3,}\.?)(?:\s*,?\s*(?:de\s+)?(\d{4})(?!\d))?/giu;
// "2026年7月10日", "7月10日(金)", "7月10日星期五": the weekday after it is skipped
const CJK = /(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*[日号號](?:\s*(?:[（(]\s*[日月火水木金土](?:曜日?)?\s*[)）]|[日月火水木金土]曜日?|(?:星期|周|週|禮拜|礼拜)[一二三四五六日天]))?/gu;
// "2026/07/10", "2026.7.10", "2026-07-10"
const YEAR_FIRST = /(?<![\p{L}\p{N}.,/:@-])(\d{4})([/.-])(\d{1,2})\2(\d{1,2})(?!\d|[./:-]\d)/gu;
// "10/07/2026", "10.07.26", "11-12-2026": day and month in the order numericOrder says
const YEAR_LAST = /(?<![\p{L}\p{N}.,/:@-])(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|\d{2})(?!\d|[./:-]\d|\p{L})/gu;

// "10/07, 11:52", "10.7., 11:52": only with a time after it, or right after words that say a reset falls on it
// ("your quota renews on 08/01")
const NO_YEAR = /(?<![\p{L}\p{N}.,/:@-])(\d{1,2})([/.])(\d{1,2})\.?(?![\d/]|[.:-]\d)/gu;

// What says that something happens on a date printed without a time.
const DATE_LEAD = /(?:^|[^\p{L}])(?:resets?|resetting|renews?|renewal|refresh(?:es)?|refills?|again|until|till|after|on|from|starting|ends?|ending|expires?|at|by)\s*[:,]?\s*(?:on\s+|at\s+)?(?:the\s+)?$/iu;

// Words after which a day and month alone are the day an allowance returns.
const RESET_LEAD = /(?:^|[^\p{L}])(?:resets?|renews?|refreshes|refills?|until|till|ends?)\s+(?:on\s+)?(?:the\s+)?$/iu;

// A numeric date's day and month in the order numericOrder says; one it leaves open names no day (month -1).
function numericDate(year: number | undefined, first: number, second: number, locale: string | undefined): { year: number | undefined; month: number; day: number } {
  const order = numericOrder(first, second, locale);
  if (order === "day-month") return { year, month: second - 1, day: first };
  if (order === "month-day") return { year, month: first - 1, day: second };
  return { year, month: -1, day: 0 };
}

function add(found: FoundDate[], text: string, context: DateContext, m: RegExpMatchArray, date: { year: number | undefined; month: number; day: number }, needsTime = false): void {
  const start = m.index!;
  let end = start + m[0].length;
  const time = readClock(text, end);
  let zone: string | undefined;
  if (time) {
    end = time.end;
    const named = readZone(text, end);
    if (named) {
      zone = named.zone;
      end = named.end;
    }
  } else if (needsTime ? !RESET_LEAD.test(text.slice(Math.max(0, start - 40), start)) : !DATE_LEAD.test(text.slice(Math.max(0, start - 40), start))) {
    return;
  }
  found.push({ at: instantOf(date, time?.clock ?? { hour: 0, minute: 0, second: 0 }, zone, context), start, end });
}

// The instant a date and time name, when it lies after now: a date without a year is this year's, or next year's
// once this year's is more than a day past.
function instantOf(date: { year: number | undefined; month: number; day: number }, clock: Clock, zone: string | undefined, context: DateContext): number | undefined {
  const now = context.now.getTime();
  const at = (year: number): number | undefined => (isRealDate(year, date.month, date.day) ? instantIn({ year, month: date.month, day: date.day, ...clock }, zone, context.timeZone) : undefined);
  let instant: number | undefined;
  if (date.year !== undefined) {
    instant = at(date.year);
  } else {
    const year = localWall(context.now, context.timeZone).year;
    instant = at(year);
    if (instant === undefined || instant < now - 86_400_000) instant = at(year + 1);
  }
  return instant !== undefined && instant > now ? instant : undefined;
}
