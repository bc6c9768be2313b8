import { CJK_WEEKDAYS, cjkWeekdayOf, readClock, readZone, weekdayOf, type Clock } from "./date-words.js";
import { findLocalDates } from "./local-dates.js";
import { instantIn, isRealDate, localWall, namedZone, offsetFromText, wallNow, wallToInstant } from "./wall-clock.js";

// Reads when a usage allowance returns from the words an agent printed, as an absolute instant.
// Pure: the clock, the local time zone and the user's locale are passed in.

export interface ResetContext {
  now: Date;
  // the zone a time without one is read in (the user's local zone)
  timeZone: string;
  // the user's locale (a BCP 47 tag such as "de-DE"), which orders a numeric date's day and month when the numbers
  // do not; without it such a date names no reset
  locale?: string;
}

export interface ResetTime {
  at: Date;
  // the words it was read from
  text: string;
}

// Added to every reset instant, so an entry is not tried the second its allowance might return.
export const RESET_MARGIN_MS = 60_000;

export { zoneOffsetMinutes } from "./wall-clock.js";

// The furthest a reset is believed to lie: beyond it, the text is taken to name no reset time at all.
const LATEST_RESET_MS = 400 * 86_400_000;

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
// an English month's name, whole or cut short ("Sept.", "Oct"): not the start of another word ("mardi", "marketing")
const MONTH_NAME = String.raw`(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)(?![a-z])\.?`;

const UNIT_MS: Record<string, number> = { w: 7 * 86_400_000, d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };
const UNITS = String.raw`weeks?|wks?|days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s`;

const TIME = String.raw`(\d{1,2})(?:[:.](\d{2}))?(?::(\d{2}))?\s*([ap]\.?m\.?)?`;
const ZONE = String.raw`(?:\s*\(?\s*((?:[A-Z][A-Za-z_]+\/[A-Za-z0-9_\/+-]+)|(?:(?:GMT|UTC)\s*[+-−]\s*\d{1,2}(?::?\d{2})?)|(?:[A-Z]{2,5}))\s*\)?)?`;

// compiled once: the shapes each reading below looks for
const RELATIVE_LEAD = new RegExp(String.raw`\b(?:in|after|for|wait):?\s+(?:(?:about|around|approximately|roughly)\s+|~\s*)?((?:(?:\d+(?:\.\d+)?)\s*(?:${UNITS})(?![a-z]),?\s*(?:and\s+)?)+)`, "i");
const RELATIVE_PART = new RegExp(String.raw`(\d+(?:\.\d+)?)\s*(${UNITS})(?![a-z])`, "gi");
const MONTH_DAY_TIME = new RegExp(String.raw`\b${MONTH_NAME}\s+(\d{1,2})(?![:\d])(?:st|nd|rd|th)?,?\s*(?:(\d{4}),?\s*)?(?:at\s+)?${TIME}${ZONE}`, "i");
const MONTH_DAY = new RegExp(String.raw`\b(?:resets?|reset on|regain access on|until|on)\s+(?:on\s+)?${MONTH_NAME}\s+(\d{1,2})(?![:\d])(?:st|nd|rd|th)?\b(?:,?\s*(\d{4}))?`, "id");
const WORD_TIME = new RegExp(String.raw`\b(?:reset|resets|resetting|again|until|at|after|from)\b[^.\d]{0,30}?\b${TIME}${ZONE}`, "i");

// Finds the reset instant in a text, or undefined when it names none. The text may span lines (a message and the
// lines after it): it is read as one.
export function parseResetTime(text: string, context: ResetContext): ResetTime | undefined {
  const flat = text.replace(/\s+/g, " ").replace(/[‐-―−]/g, "-");
  const found = fromEpoch(flat) ?? fromIso(flat, context) ?? fromRelative(flat, context) ?? fromPrintedDate(flat, context) ?? fromForeignUntil(flat, context);
  // "in 99999999999999 days" names no instant a clock can hold, and no allowance returns years from now
  const at = found?.at.getTime();
  return at !== undefined && Number.isFinite(at) && at - context.now.getTime() <= LATEST_RESET_MS ? found : undefined;
}

// --- internal ---

function done(at: number, text: string): ResetTime {
  return { at: new Date(at + RESET_MARGIN_MS), text: text.trim() };
}

// A clock time the allowance is held back until, in the words of another language an agent speaks ("到 15:00",
// "15:00まで", "hasta 15:00", "до 15:00"): read as "until" would be.
const FOREIGN_UNTIL = /(?:到|至|(?<!\p{L})(?:hasta(?: las)?|até(?: às)?|до|do|jusqu'(?:à|a)|bis|um|à))\s*(\d{1,2}:\d{2})(?!\d)|(\d{1,2}:\d{2})\s*まで/u;

function fromForeignUntil(text: string, context: ResetContext): ResetTime | undefined {
  const match = FOREIGN_UNTIL.exec(text);
  const found = match ? fromPrintedDate(`until ${match[1] ?? match[2]}`, context) : undefined;
  return found && { at: found.at, text: match![0] };
}

function fromEpoch(text: string): ResetTime | undefined {
  const match = /(?:\|\s*|["']?resets?_?at["']?\s*[:=]\s*|["']?reset["']?\s*[:=]\s*)(\d{10}|\d{13})\b/i.exec(text);
  if (!match) return undefined;
  const value = Number(match[1]);
  return done(match[1]!.length === 13 ? value : value * 1000, match[0]);
}

function fromIso(text: string, context: ResetContext): ResetTime | undefined {
  const match = /\b(\d{4})-(\d{2})-(\d{2})(?:T|\s+at\s+|\s+)(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:\s*(Z|[+-]\d{2}:?\d{2})|\s+(UTC|GMT|[A-Z]{2,5}))?/.exec(text);
  if (!match) return undefined;
  const wall = { year: +match[1]!, month: +match[2]! - 1, day: +match[3]!, hour: +match[4]!, minute: +match[5]!, second: +(match[6] ?? 0) };
  if (wall.month > 11 || wall.day < 1 || wall.day > 31 || wall.hour > 23 || wall.minute > 59 || wall.second > 60) return undefined;
  const offset = match[7] === "Z" ? 0 : offsetFromText(match[7] ?? match[8] ?? "");
  if (offset !== undefined) {
    return done(Date.UTC(wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second) - offset * 60_000, match[0]);
  }
  return done(wallToInstant(wall, context.timeZone), match[0]);
}

function fromRelative(text: string, context: ResetContext): ResetTime | undefined {
  const lead = RELATIVE_LEAD.exec(text);
  const seconds = /["']?resets?_in_seconds["']?\s*[:=]\s*(\d+)/i.exec(text);
  if (seconds) return done(context.now.getTime() + Number(seconds[1]) * 1000, seconds[0]);
  if (!lead) return undefined;
  let total = 0;
  for (const part of lead[1]!.matchAll(RELATIVE_PART)) {
    total += Number(part[1]) * UNIT_MS[part[2]!.toLowerCase()[0]!]!;
  }
  return total > 0 ? done(context.now.getTime() + total, lead[0]) : undefined;
}

// A date or time printed as words and numbers. A date in the user's locale that has passed, or whose day and month
// cannot be told apart, is taken out before the other shapes are read, so its time is not read as today's.
function fromPrintedDate(text: string, context: ResetContext): ResetTime | undefined {
  const dates = findLocalDates(text, context);
  const first = dates.find((date) => date.at !== undefined);
  if (first) return done(first.at!, text.slice(first.start, first.end));
  let rest = "";
  let from = 0;
  for (const date of dates) {
    if (date.end <= from) continue;
    const start = Math.max(date.start, from);
    rest += text.slice(from, start) + " ".repeat(date.end - start);
    from = date.end;
  }
  rest += text.slice(from);
  const english = fromDateTime(rest, context);
  if (english) return english;
  // a day named with a time that has passed ("today at 9am" at noon) names no reset, not tomorrow's
  const day = fromDayWord(rest, context);
  if (day !== undefined) return day ?? undefined;
  return fromDayOfMonth(rest, context) ?? fromNextMonth(rest, context) ?? fromWeekdayTime(rest, context) ?? fromTime(rest, context);
}

// "Mar 3rd, 2027 8:15 AM", "resets Jan 2, 9am (Asia/Tokyo)": a month's English name before the day. A year
// printed is kept even when that day has passed (the session then rests the entry for cooldown_minutes).
function fromDateTime(text: string, context: ResetContext): ResetTime | undefined {
  const match = MONTH_DAY_TIME.exec(text);
  // a bare number after the day is not a time ("Oct 24"): then the date alone is read, at midnight
  if (!match || (!match[7] && !match[5])) return fromDate(text, context);
  const month = MONTHS.indexOf(match[1]!.toLowerCase().slice(0, 3));
  const clock = toClock(match[4]!, match[5], match[6], match[7]);
  if (!clock) return undefined;
  const zone = match[8];
  const now = context.now;
  const explicitYear = match[3] ? Number(match[3]) : undefined;
  let year = explicitYear ?? localWall(now, context.timeZone).year;
  const at = (y: number): number => instantIn({ year: y, month, day: Number(match[2]), ...clock }, zone, context.timeZone);
  let instant = at(year);
  if (!explicitYear && instant < now.getTime() - 86_400_000) instant = at(++year);
  return done(instant, match[0]);
}

// "resets on February 21", "resets Oct 24, 2027": the start of that day in the local zone.
function fromDate(text: string, context: ResetContext): ResetTime | undefined {
  const match = MONTH_DAY.exec(text);
  // "mar. 09 h 30" is a weekday and a time
  if (!match || readClock(text, match.indices![2]![0])) return undefined;
  const month = MONTHS.indexOf(match[1]!.toLowerCase().slice(0, 3));
  const explicitYear = match[3] ? Number(match[3]) : undefined;
  let year = explicitYear ?? localWall(context.now, context.timeZone).year;
  const at = (y: number): number => wallToInstant({ year: y, month, day: Number(match[2]), hour: 0, minute: 0, second: 0 }, context.timeZone);
  let instant = at(year);
  if (!explicitYear && instant < context.now.getTime() - 86_400_000) instant = at(++year);
  return done(instant, match[0]);
}

const DAY_WORD = /(?<![\p{L}\p{N}])(tomorrow|tonight|today)(?![\p{L}'’])/giu;
const AFTER_DAY_WORD = /(?:\s*,)?\s*(?:(at|around|by|from|after)\s+)?(?:(midnight|noon)(?![\p{L}]))?/iuy;
const BARE_HOUR = /(\d{1,2})(?![\d:\p{L}]|\.\d)/uy;
const TIME_BEFORE_DAY_WORD = /(?:^|[^\p{L}\p{N}:])(?:(midnight|noon)|(\d{1,2})(?::(\d{2}))?(?::(\d{2}))?\s*([ap])\.?\s?m\.?|(\d{1,2}):(\d{2})(?::(\d{2}))?)\s*$/iu;
// what says that an allowance comes back on a day named without a time: "resets tomorrow", "try again tomorrow"
const DAY_LEAD = /(?:^|[^\p{L}])(?:resets?|resetting|renews?|refresh(?:es)?|refills?|again|until|till|available)\s*[:,]?\s*(?:(?:again|on|at|by)\s+)?$/iu;
const MIDNIGHT_ALONE = /(?<![\p{L}])(?:at|by|until|till|after)\s+(midnight|noon)(?![\p{L}])/giu;

// "tomorrow at 9am", "at 9am tomorrow", "tonight at 11pm", "resets tomorrow", "at midnight (UTC)". "Tomorrow" or
// "tonight" without a time is the start of tomorrow; "today" without one names no instant. Midnight ends the day
// named, noon is its middle; a time on a day named that has passed names no reset.
function fromDayWord(text: string, context: ResetContext): ResetTime | null | undefined {
  let passed = false;
  for (const m of text.matchAll(DAY_WORD)) {
    const word = m[1]!.toLowerCase();
    const start = m.index!;
    AFTER_DAY_WORD.lastIndex = start + m[0].length;
    const after = AFTER_DAY_WORD.exec(text)!;
    let end = AFTER_DAY_WORD.lastIndex;
    let clock: Clock | undefined = after[2] ? namedHour(after[2]) : undefined;
    if (!clock) {
      const read = readClock(text, end);
      if (read) {
        clock = read.clock;
        end = read.end;
      } else if (after[1]?.toLowerCase() === "at") {
        BARE_HOUR.lastIndex = end;
        const bare = BARE_HOUR.exec(text);
        if (bare && Number(bare[1]) <= 23) {
          clock = { hour: Number(bare[1]), minute: 0, second: 0 };
          end = BARE_HOUR.lastIndex;
        }
      }
    }
    let from = start;
    if (!clock) {
      const before = TIME_BEFORE_DAY_WORD.exec(text.slice(Math.max(0, start - 30), start));
      if (before) {
        clock = before[1] ? namedHour(before[1]) : toClock(before[2] ?? before[6]!, before[3] ?? before[7], before[4] ?? before[8], before[5]);
        from = start - before[0].length + (before[0].length - before[0].trimStart().length);
      }
    }
    let days = word === "tomorrow" ? 1 : 0;
    if (!clock) {
      if (word === "today" || !DAY_LEAD.test(text.slice(Math.max(0, start - 40), start))) continue;
      clock = { hour: 0, minute: 0, second: 0 };
      days = 1;
    } else if (word === "tonight" && clock.hour < 6) {
      // tonight's small hours belong to the night after today
      days = 1;
    }
    const zone = readZone(text, end);
    if (zone) end = zone.end;
    const instant = dayInstant(days, clock, zone?.zone, context);
    if (instant > context.now.getTime()) return done(instant, text.slice(from, end));
    passed = true;
  }
  if (passed) return null;
  for (const m of text.matchAll(MIDNIGHT_ALONE)) {
    const clock = namedHour(m[1]!);
    let end = m.index! + m[0].length;
    const zone = readZone(text, end);
    if (zone) end = zone.end;
    for (let days = 0; days <= 1; days++) {
      const instant = dayInstant(days, clock, zone?.zone, context);
      if (instant > context.now.getTime()) return done(instant, text.slice(m.index!, end));
    }
  }
  return undefined;
}

function namedHour(word: string): Clock {
  return { hour: word.toLowerCase() === "noon" ? 12 : 24, minute: 0, second: 0 };
}

// A time on the day that lies a number of days after today, where the text's zone lies.
function dayInstant(days: number, clock: Clock, zone: string | undefined, context: ResetContext): number {
  const today = wallNow(context.now, zone, context.timeZone);
  return instantIn({ ...today, day: today.day + days, ...clock }, zone, context.timeZone);
}

const DAY_OF_MONTH = /(?<![\p{L}])(?:on|from|until|after|by)\s+the\s+(\d{1,2})(?:st|nd|rd|th)(?:\s+of\s+(?:the|each|every|next|this)\s+month)?(?![\p{L}\p{N}])/giu;

// "renews on the 1st", "resets on the 15th of each month": the next such day, at its start.
function fromDayOfMonth(text: string, context: ResetContext): ResetTime | undefined {
  for (const m of text.matchAll(DAY_OF_MONTH)) {
    let end = m.index! + m[0].length;
    const read = readClock(text, end);
    const next = /^\s*(\p{L}+)/u.exec(text.slice(end, end + 40));
    // "on the 3rd attempt" is no date
    if (!read && next && !["and", "or", "so", "when", "if", "to", "then"].includes(next[1]!.toLowerCase())) continue;
    if (read) end = read.end;
    const day = Number(m[1]);
    const today = localWall(context.now, context.timeZone);
    for (let add = 0; add <= 12; add++) {
      const month = today.month + add;
      const year = today.year + Math.floor(month / 12);
      if (!isRealDate(year, month % 12, day)) continue;
      const instant = instantIn({ year, month: month % 12, day, ...(read?.clock ?? { hour: 0, minute: 0, second: 0 }) }, undefined, context.timeZone);
      if (instant > context.now.getTime()) return done(instant, text.slice(m.index!, end));
    }
  }
  return undefined;
}

const NEXT_MONTH = /(?<![\p{L}])(?:again|until|till|resets?|renews?|refills?|available|back)\s+(?:\p{L}+\s+){0,2}?(?:next|the next) (?:month|billing (?:cycle|period))(?![\p{L}])/iu;

// "try again next month", "resets next billing cycle": the start of the first day of next month.
function fromNextMonth(text: string, context: ResetContext): ResetTime | undefined {
  const m = NEXT_MONTH.exec(text);
  if (!m) return undefined;
  const today = localWall(context.now, context.timeZone);
  const month = today.month + 1;
  return done(instantIn({ year: today.year + Math.floor(month / 12), month: month % 12, day: 1, hour: 0, minute: 0, second: 0 }, undefined, context.timeZone), m[0]);
}

const WEEKDAY_WORD = /(?<![\p{L}\p{N}])(\p{L}{2,}(?:-feira)?)(\.?)(?=,?\s*(?:(?:at|à|a las|a la|às|as|um)\s+)?(?:\d|上午|下午|午前|午後))/giu;
const CJK_WEEKDAY = new RegExp(String.raw`(?:星期|周|週|禮拜|礼拜)([一二三四五六日天])|([${CJK_WEEKDAYS}])曜日?`, "gu");
const CJK_WEEKDAY_AFTER = new RegExp(String.raw`(?:(?:午前|午後|上午|下午)\s*)?\d{1,2}[:：]\d{2}(?:[:：]\d{2})?\s*[（(]\s*([${CJK_WEEKDAYS}])(?:曜日?)?\s*[)）]`, "gu");

// "resets Mon 12:00am", "Friday 9:00", "viernes, 11:52", "Fr., 11:52", "月曜日 9:00", "周五 下午3:00", "11:52 (金)":
// the next such weekday at that time.
function fromWeekdayTime(text: string, context: ResetContext): ResetTime | undefined {
  // where the weekday stands, where its time begins, and where a weekday printed after its time ends
  const candidates: { start: number; clockAt: number; weekday: number; end?: number }[] = [];
  for (const m of text.matchAll(WEEKDAY_WORD)) {
    const weekday = weekdayOf(m[1]!, m[2] === ".");
    if (weekday !== undefined) candidates.push({ start: m.index!, clockAt: m.index! + m[0].length, weekday });
  }
  for (const m of text.matchAll(CJK_WEEKDAY)) {
    const weekday = m[1] ? cjkWeekdayOf(m[1]) : CJK_WEEKDAYS.indexOf(m[2]!);
    if (weekday !== undefined) candidates.push({ start: m.index!, clockAt: m.index! + m[0].length, weekday });
  }
  for (const m of text.matchAll(CJK_WEEKDAY_AFTER)) candidates.push({ start: m.index!, clockAt: m.index!, weekday: CJK_WEEKDAYS.indexOf(m[1]!), end: m.index! + m[0].length });
  candidates.sort((a, b) => a.start - b.start);
  for (const candidate of candidates) {
    const read = readClock(text, candidate.clockAt);
    if (!read) continue;
    const zone = readZone(text, read.end);
    const end = candidate.end ?? zone?.end ?? read.end;
    const today = localWall(context.now, namedZone(zone?.zone, context.timeZone));
    const weekday = new Date(Date.UTC(today.year, today.month, today.day)).getUTCDay();
    for (let add = 0; add <= 1; add++) {
      const instant = instantIn({ ...today, day: today.day + ((candidate.weekday - weekday + 7) % 7) + add * 7, ...read.clock }, zone?.zone, context.timeZone);
      if (instant > context.now.getTime()) return done(instant, text.slice(candidate.start, end));
    }
  }
  return undefined;
}

function fromTime(text: string, context: ResetContext): ResetTime | undefined {
  const match = WORD_TIME.exec(text);
  if (!match || (!match[2] && !match[4])) return undefined;
  const clock = toClock(match[1]!, match[2], match[3], match[4]);
  if (!clock) return undefined;
  const zone = match[5];
  const today = localWall(context.now, namedZone(zone, context.timeZone));
  for (let add = 0; add <= 1; add++) {
    const instant = instantIn({ ...today, day: today.day + add, ...clock }, zone, context.timeZone);
    if (instant > context.now.getTime()) return done(instant, match[0]);
  }
  return undefined;
}

function toClock(hourText: string, minuteText: string | undefined, secondText: string | undefined, meridiem: string | undefined): Clock | undefined {
  let hour = Number(hourText);
  const minute = minuteText ? Number(minuteText) : 0;
  if (minute > 59 || hour > 24) return undefined;
  if (meridiem) {
    if (hour < 1 || hour > 12) return undefined;
    const pm = meridiem.toLowerCase().startsWith("p");
    hour = (hour % 12) + (pm ? 12 : 0);
  }
  return { hour: hour % 24, minute, second: secondText ? Number(secondText) : 0 };
}
