// Reads when a usage allowance returns from the words an agent printed, as an absolute instant.
// Pure: the clock and the local time zone are passed in.

export interface ResetContext {
  now: Date;
  // the zone a time without one is read in (the user's local zone)
  timeZone: string;
}

export interface ResetTime {
  at: Date;
  // the words it was read from
  text: string;
}

// Added to every reset instant, so an entry is not tried the second its allowance might return.
export const RESET_MARGIN_MS = 60_000;

// The furthest a reset is believed to lie: beyond it, the text is taken to name no reset time at all.
const LATEST_RESET_MS = 400 * 86_400_000;

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const WEEKDAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

const ZONE_OFFSETS: Record<string, number> = {
  UTC: 0, GMT: 0, Z: 0, WET: 0, BST: 60, IST: 330, CET: 60, CEST: 120, EET: 120, EEST: 180, MSK: 180,
  JST: 540, KST: 540, HKT: 480, SGT: 480, AEST: 600, AEDT: 660, NZST: 720, NZDT: 780,
  EST: -300, EDT: -240, CST: -360, CDT: -300, MST: -420, MDT: -360, PST: -480, PDT: -420, AKST: -540, AKDT: -480, HST: -600,
};

const UNIT_MS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };

const TIME = String.raw`(\d{1,2})(?:[:.](\d{2}))?(?::(\d{2}))?\s*([ap]\.?m\.?)?`;
const ZONE = String.raw`(?:\s*\(?\s*((?:[A-Z][A-Za-z_]+\/[A-Za-z0-9_\/+-]+)|(?:(?:GMT|UTC)\s*[+-−]\s*\d{1,2}(?::?\d{2})?)|(?:[A-Z]{2,5}))\s*\)?)?`;

// Finds the reset instant in a text, or undefined when it names none.
export function parseResetTime(text: string, context: ResetContext): ResetTime | undefined {
  const flat = text.replace(/\s+/g, " ").replace(/[‐-―−]/g, (c) => (c === "−" ? "-" : "-"));
  const found =
    fromEpoch(flat) ??
    fromIso(flat, context) ??
    fromRelative(flat, context) ??
    fromDateTime(flat, context) ??
    fromWeekdayTime(flat, context) ??
    fromTime(flat, context);
  // "in 99999999999999 days" names no instant a clock can hold, and no allowance returns years from now
  const at = found?.at.getTime();
  return at !== undefined && Number.isFinite(at) && at - context.now.getTime() <= LATEST_RESET_MS ? found : undefined;
}

// The offset of a zone from UTC at an instant, in minutes.
export function zoneOffsetMinutes(timeZone: string, at: Date): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
  }).formatToParts(at);
  const get = (type: string): number => Number(parts.find((p) => p.type === type)?.value);
  const local = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour") % 24, get("minute"), get("second"));
  return Math.round((local - Math.floor(at.getTime() / 1000) * 1000) / 60_000);
}

// --- internal ---

interface Wall {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function done(at: number, text: string): ResetTime {
  return { at: new Date(at + RESET_MARGIN_MS), text: text.trim() };
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
  const lead = /\b(?:in|after|for|wait):?\s+((?:(?:\d+(?:\.\d+)?)\s*(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)(?![a-z]),?\s*(?:and\s+)?)+)/i.exec(text);
  const seconds = /["']?resets?_in_seconds["']?\s*[:=]\s*(\d+)/i.exec(text);
  if (seconds) return done(context.now.getTime() + Number(seconds[1]) * 1000, seconds[0]);
  if (!lead) return undefined;
  let total = 0;
  for (const part of lead[1]!.matchAll(/(\d+(?:\.\d+)?)\s*(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)(?![a-z])/gi)) {
    total += Number(part[1]) * UNIT_MS[part[2]!.toLowerCase()[0]!]!;
  }
  return total > 0 ? done(context.now.getTime() + total, lead[0]) : undefined;
}

function fromDateTime(text: string, context: ResetContext): ResetTime | undefined {
  const monthName = String.raw`(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?`;
  const pattern = new RegExp(
    String.raw`\b${monthName}\s+(\d{1,2})(?:st|nd|rd|th)?,?\s*(?:(\d{4}),?\s*)?(?:at\s+)?${TIME}${ZONE}`,
    "i",
  );
  const match = pattern.exec(text);
  // a bare number after the day is not a time ("Oct 24"): then the date alone is read, at midnight
  if (!match || (!match[7] && !match[5])) return fromDate(text, context);
  const month = MONTHS.indexOf(match[1]!.toLowerCase().slice(0, 3));
  const clock = toClock(match[4]!, match[5], match[6], match[7]);
  if (!clock) return undefined;
  const zone = match[8];
  const now = context.now;
  const explicitYear = match[3] ? Number(match[3]) : undefined;
  let year = explicitYear ?? localWall(now, context.timeZone).year;
  const at = (y: number): number | undefined => instantIn({ year: y, month, day: Number(match[2]), ...clock, second: 0 }, zone, context);
  let instant = at(year);
  if (instant === undefined) return undefined;
  if (!explicitYear && instant < now.getTime() - 86_400_000) instant = at(++year)!;
  return done(instant, match[0]);
}

function fromWeekdayTime(text: string, context: ResetContext): ResetTime | undefined {
  const pattern = new RegExp(String.raw`\b(sun|mon|tue|wed|thu|fri|sat)[a-z]*\.?,?\s+(?:at\s+)?${TIME}${ZONE}`, "i");
  const match = pattern.exec(text);
  if (!match || (!match[3] && !match[5])) return undefined;
  const clock = toClock(match[2]!, match[3], match[4], match[5]);
  if (!clock) return undefined;
  const zone = match[6];
  const target = WEEKDAYS.indexOf(match[1]!.toLowerCase().slice(0, 3));
  const today = localWall(context.now, namedZone(zone, context));
  const weekday = new Date(Date.UTC(today.year, today.month, today.day)).getUTCDay();
  for (let add = 0; add <= 7; add++) {
    const instant = instantIn({ ...today, day: today.day + ((target - weekday + 7) % 7) + add * 7, ...clock, second: 0 }, zone, context);
    if (instant !== undefined && instant > context.now.getTime()) return done(instant, match[0]);
    if (add === 0 && (target - weekday + 7) % 7 !== 0) continue;
  }
  return undefined;
}

function fromTime(text: string, context: ResetContext): ResetTime | undefined {
  const pattern = new RegExp(String.raw`\b(?:reset|resets|resetting|again|until|at|after|from)\b[^.\d]{0,30}?\b${TIME}${ZONE}`, "i");
  const match = pattern.exec(text);
  if (!match || (!match[2] && !match[4])) return undefined;
  const clock = toClock(match[1]!, match[2], match[3], match[4]);
  if (!clock) return undefined;
  const zone = match[5];
  const today = localWall(context.now, namedZone(zone, context));
  for (let add = 0; add <= 1; add++) {
    const instant = instantIn({ ...today, day: today.day + add, ...clock, second: 0 }, zone, context);
    if (instant === undefined) return undefined;
    if (instant > context.now.getTime()) return done(instant, match[0].replace(/^\S+\s*/, (w) => w));
  }
  return undefined;
}

// "resets on February 21", "resets Oct 24, 2027": the start of that day in the zone given, else the local zone.
function fromDate(text: string, context: ResetContext): ResetTime | undefined {
  const match = /\b(?:resets?|reset on|regain access on|until|on)\s+(?:on\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s*(\d{4}))?/i.exec(text);
  if (!match) return undefined;
  const month = MONTHS.indexOf(match[1]!.toLowerCase().slice(0, 3));
  const explicitYear = match[3] ? Number(match[3]) : undefined;
  let year = explicitYear ?? localWall(context.now, context.timeZone).year;
  const at = (y: number): number => wallToInstant({ year: y, month, day: Number(match[2]), hour: 0, minute: 0, second: 0 }, context.timeZone);
  let instant = at(year);
  if (!explicitYear && instant < context.now.getTime() - 86_400_000) instant = at(++year);
  return done(instant, match[0]);
}

function toClock(hourText: string, minuteText: string | undefined, secondText: string | undefined, meridiem: string | undefined): { hour: number; minute: number; second: number } | undefined {
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

// A wall-clock time read in a zone named in the text (IANA name, abbreviation or GMT±N), else the local zone.
function instantIn(wall: Wall, zone: string | undefined, context: ResetContext): number | undefined {
  const normalized = normalizeWall(wall);
  if (zone) {
    const fixed = offsetFromText(zone);
    if (fixed !== undefined) {
      return Date.UTC(normalized.year, normalized.month, normalized.day, normalized.hour, normalized.minute, normalized.second) - fixed * 60_000;
    }
    if (isValidZone(zone)) return wallToInstant(normalized, zone);
  }
  return wallToInstant(normalized, context.timeZone);
}

function normalizeWall(wall: Wall): Wall {
  const date = new Date(Date.UTC(wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second));
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth(),
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
  };
}

// The instant a wall-clock time names in an IANA zone, across daylight-saving changes.
function wallToInstant(wall: Wall, timeZone: string): number {
  const asUtc = Date.UTC(wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second);
  let guess = asUtc - zoneOffsetMinutes(timeZone, new Date(asUtc)) * 60_000;
  guess = asUtc - zoneOffsetMinutes(timeZone, new Date(guess)) * 60_000;
  return guess;
}

function localWall(at: Date, timeZone: string): Wall {
  const shifted = new Date(at.getTime() + zoneOffsetMinutes(timeZone, at) * 60_000);
  return {
    year: shifted.getUTCFullYear(),
    month: shifted.getUTCMonth(),
    day: shifted.getUTCDate(),
    hour: shifted.getUTCHours(),
    minute: shifted.getUTCMinutes(),
    second: shifted.getUTCSeconds(),
  };
}

// Minutes east of UTC for "PST", "GMT-3", "UTC+05:30", "+0200"; undefined for anything else.
function offsetFromText(zone: string): number | undefined {
  const clean = zone.trim().replace("−", "-");
  const named = ZONE_OFFSETS[clean.toUpperCase()];
  if (named !== undefined && /^[A-Z]+$/i.test(clean)) return named;
  const numeric = /^(?:GMT|UTC)?\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?$/i.exec(clean);
  if (!numeric) return undefined;
  const minutes = Number(numeric[2]) * 60 + Number(numeric[3] ?? 0);
  return numeric[1] === "-" ? -minutes : minutes;
}

// The IANA zone a text names for its day, else the local zone: words that only look like a zone are not one.
function namedZone(zone: string | undefined, context: ResetContext): string {
  return zone && !isAbbreviation(zone) && !/^(GMT|UTC)/i.test(zone) && isValidZone(zone) ? zone : context.timeZone;
}

function isAbbreviation(zone: string): boolean {
  return /^[A-Z]{2,5}$/.test(zone.trim());
}

function isValidZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
