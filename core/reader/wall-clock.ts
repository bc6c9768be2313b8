// Wall-clock dates and times in a zone, and the instants they name. Pure: the zone is always passed in.

export interface Wall {
  year: number;
  // 0 = January
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const ZONE_OFFSETS: Record<string, number> = {
  UTC: 0, GMT: 0, Z: 0, WET: 0, BST: 60, IST: 330, CET: 60, CEST: 120, EET: 120, EEST: 180, MSK: 180,
  JST: 540, KST: 540, HKT: 480, SGT: 480, AEST: 600, AEDT: 660, NZST: 720, NZDT: 780,
  EST: -300, EDT: -240, CST: -360, CDT: -300, MST: -420, MDT: -360, PST: -480, PDT: -420, AKST: -540, AKDT: -480, HST: -600,
};

// The offset of a zone from UTC at an instant, in minutes.
export function zoneOffsetMinutes(timeZone: string, at: Date): number {
  // "12/1/2026, 22:42:28": format is several times faster than formatToParts, and this runs for every time read
  const format = zoneFormat(timeZone);
  const m = /^(\d+)\/(\d+)\/(\d+),? (\d+):(\d+):(\d+)$/.exec(format.format(at));
  const parts = m ? undefined : format.formatToParts(at);
  const get = (index: number, type: string): number => Number(m ? m[index] : parts!.find((p) => p.type === type)?.value);
  const local = Date.UTC(get(3, "year"), get(1, "month") - 1, get(2, "day"), get(4, "hour") % 24, get(5, "minute"), get(6, "second"));
  return Math.round((local - Math.floor(at.getTime() / 1000) * 1000) / 60_000);
}

// A wall-clock time read in a zone named in the text (IANA name, abbreviation or GMT±N), else in the local zone.
export function instantIn(wall: Wall, zone: string | undefined, localZone: string): number {
  const normalized = normalizeWall(wall);
  if (zone) {
    const fixed = offsetFromText(zone);
    if (fixed !== undefined) {
      return Date.UTC(normalized.year, normalized.month, normalized.day, normalized.hour, normalized.minute, normalized.second) - fixed * 60_000;
    }
    if (isValidZone(zone)) return wallToInstant(normalized, zone);
  }
  return wallToInstant(normalized, localZone);
}

// Whether a day of a month exists (no 31 April, no 29 February outside leap years).
export function isRealDate(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month, day));
  return month >= 0 && month < 12 && day >= 1 && date.getUTCMonth() === month && date.getUTCDate() === day;
}

// Rolls days, hours and minutes past their range over into the next ones.
export function normalizeWall(wall: Wall): Wall {
  return wallOf(Date.UTC(wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second));
}

// The instant a wall-clock time names in an IANA zone, across daylight-saving changes.
export function wallToInstant(wall: Wall, timeZone: string): number {
  const asUtc = Date.UTC(wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second);
  let guess = asUtc - zoneOffsetMinutes(timeZone, new Date(asUtc)) * 60_000;
  guess = asUtc - zoneOffsetMinutes(timeZone, new Date(guess)) * 60_000;
  return guess;
}

// The wall-clock date and time of an instant in an IANA zone.
export function localWall(at: Date, timeZone: string): Wall {
  return wallOf(at.getTime() + zoneOffsetMinutes(timeZone, at) * 60_000);
}

// Minutes east of UTC for "PST", "GMT-3", "UTC+05:30", "+0200"; undefined for anything else.
export function offsetFromText(zone: string): number | undefined {
  const clean = zone.trim().replace("−", "-");
  const named = ZONE_OFFSETS[clean.toUpperCase()];
  if (named !== undefined && /^[A-Z]+$/i.test(clean)) return named;
  const numeric = /^(?:GMT|UTC)?\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?$/i.exec(clean);
  if (!numeric) return undefined;
  const minutes = Number(numeric[2]) * 60 + Number(numeric[3] ?? 0);
  return numeric[1] === "-" ? -minutes : minutes;
}

// The IANA zone a text names for its day, else the local zone: words that only look like a zone are not one.
export function namedZone(zone: string | undefined, localZone: string): string {
  return zone && !/^[A-Z]{2,5}$/.test(zone.trim()) && !/^(GMT|UTC)/i.test(zone) && isValidZone(zone) ? zone : localZone;
}

// The wall-clock date and time now where a text's zone lies: a fixed offset it names, else namedZone's zone.
export function wallNow(now: Date, zone: string | undefined, localZone: string): Wall {
  const fixed = zone ? offsetFromText(zone) : undefined;
  if (fixed === undefined) return localWall(now, namedZone(zone, localZone));
  return wallOf(now.getTime() + fixed * 60_000);
}

// The wall-clock fields of a count of milliseconds read as UTC.
function wallOf(ms: number): Wall {
  const date = new Date(ms);
  return {
    year: date.getUTCFullYear(),
    month: date.getUTCMonth(),
    day: date.getUTCDate(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
  };
}

// One formatter per zone (making one costs far more than using it), and none for a name that is not a zone.
const FORMATS = new Map<string, Intl.DateTimeFormat | undefined>();

function zoneFormat(timeZone: string): Intl.DateTimeFormat {
  const format = zoneFormatOrNone(timeZone);
  // the same RangeError the runtime gives for a zone it does not know
  if (!format) return new Intl.DateTimeFormat("en-US", { timeZone });
  return format;
}

function zoneFormatOrNone(timeZone: string): Intl.DateTimeFormat | undefined {
  if (FORMATS.has(timeZone)) return FORMATS.get(timeZone);
  let format: Intl.DateTimeFormat | undefined;
  try {
    format = new Intl.DateTimeFormat("en-US", { timeZone, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric" });
  } catch {
    format = undefined;
  }
  // text from agents can name any number of zones: the cache keeps to a bound
  if (FORMATS.size >= 64) FORMATS.clear();
  FORMATS.set(timeZone, format);
  return format;
}

// An IANA zone name the runtime knows ("Asia/Shanghai"), as a manifest's or an entry's time_zone must be.
export function isTimeZone(name: string): boolean {
  return /^[A-Za-z_]+(?:\/[A-Za-z0-9_+-]+)+$|^UTC$/.test(name) && isValidZone(name);
}

function isValidZone(zone: string): boolean {
  return zoneFormatOrNone(zone) !== undefined;
}
