// Month and weekday names as agents print them in English, Spanish, Portuguese, French and German (full, cut short,
// with or without a dot or accents), the Chinese and Japanese weekday signs, and clock times as those locales write
// them. Pure: these only tell what a word or a clock at a place in a text says.

// Full names without accents, by month (0 = January) and by weekday (0 = Sunday); a word is a name when it is one of
// these or the start of exactly one of them, at least three letters long (so "jui" names neither June nor July).
const MONTH_NAMES: readonly string[][] = [
  ["january", "enero", "janeiro", "janvier", "januar", "janner"],
  ["february", "febrero", "fevereiro", "fevrier", "februar", "feber"],
  ["march", "marzo", "marco", "mars", "marz"],
  ["april", "abril", "avril"],
  ["may", "mayo", "maio", "mai"],
  ["june", "junio", "junho", "juin", "juni"],
  ["july", "julio", "julho", "juillet", "juli"],
  ["august", "agosto", "aout"],
  ["september", "septiembre", "setiembre", "setembro", "septembre"],
  ["october", "octubre", "outubro", "octobre", "oktober"],
  ["november", "noviembre", "novembro", "novembre"],
  ["december", "diciembre", "dezembro", "decembre", "dezember"],
];

const WEEKDAY_NAMES: readonly string[][] = [
  ["sunday", "domingo", "dimanche", "sonntag"],
  ["monday", "lunes", "segunda-feira", "lundi", "montag"],
  ["tuesday", "martes", "terca-feira", "mardi", "dienstag"],
  ["wednesday", "weds", "miercoles", "quarta-feira", "mercredi", "mittwoch"],
  ["thursday", "jueves", "quinta-feira", "jeudi", "donnerstag"],
  ["friday", "viernes", "sexta-feira", "vendredi", "freitag"],
  ["saturday", "sabado", "samedi", "samstag", "sonnabend"],
];

// German cuts weekdays to two letters and a dot ("Fr., 11:52"); without the dot these are everyday words.
const SHORT_WEEKDAYS = ["so", "mo", "di", "mi", "do", "fr", "sa"];

// The weekday signs of Japanese (月曜日, (金)) and Chinese (星期一, 周五, 週五), Sunday first.
export const CJK_WEEKDAYS = "日月火水木金土";
export const CJK_NUMBERED_WEEKDAYS = "日一二三四五六";

// The month (0 = January) a word names, or undefined.
export function monthOf(word: string): number | undefined {
  return nameIndex(MONTH_NAMES, plain(word));
}

// The weekday (0 = Sunday) a word names, or undefined; dotted says a dot follows it.
export function weekdayOf(word: string, dotted = false): number | undefined {
  const key = plain(word);
  if (key.length === 2) return dotted && SHORT_WEEKDAYS.includes(key) ? SHORT_WEEKDAYS.indexOf(key) : undefined;
  return nameIndex(WEEKDAY_NAMES, key);
}

// The weekday a Chinese or Japanese sign names (天 and 日 are Sunday), or undefined.
export function cjkWeekdayOf(sign: string): number | undefined {
  if (sign === "天") return 0;
  const numbered = CJK_NUMBERED_WEEKDAYS.indexOf(sign);
  return numbered >= 0 ? numbered : undefined;
}

export interface Clock {
  hour: number;
  minute: number;
  second: number;
}

// What may stand between a date and its time: "at", "à", "a las", "às", "um", a comma.
const CLOCK_LEAD = String.raw`(?:\s*,)?\s*(?:(?:at|à|a las|a la|às|as|a|um|,)\s+)?`;
const DAY_HALF = "上午|下午|午前|午後|中午|晚上|早上|凌晨";

// A clock time: "11:52", "11:52:07", "3pm", "11:52 a. m.", "11 h 52 min 07 s", "9h", "15 Uhr", "午前11:52", "下午3:00:00",
// "11時52分", "3点"; a bare number is not one.
const CLOCK = new RegExp(
  String.raw`${CLOCK_LEAD}(?:(${DAY_HALF})\s*)?(\d{1,2})(?:\s*[:：]\s*(\d{2})(?:\s*[:：]\s*(\d{2}))?|(\s*[時时点點])(?:\s*(\d{1,2})\s*分)?(?:\s*(\d{1,2})\s*秒)?|(\s?h)(?:\s?(\d{2})(?:\s?min(?:\s?(\d{2})\s?s)?)?)?(?![\p{L}\d])|\.(\d{2})(?![\d.]))?(\s*Uhr(?![\p{L}]))?(?:\s*([ap])\.?\s?m\.?(?![\p{L}]))?`,
  "iuy",
);

// The clock time that begins at a place in a text (after "at", "à", a comma…), with where it ends.
export function readClock(text: string, at: number): { clock: Clock; end: number } | undefined {
  CLOCK.lastIndex = at;
  const m = CLOCK.exec(text);
  if (!m) return undefined;
  const [, half, hourText, colonMinute, colonSecond, cjkMark, cjkMinute, cjkSecond, hMark, hMinute, hSecond, dotMinute, uhr, meridiem] = m;
  const minuteText = colonMinute ?? cjkMinute ?? hMinute ?? dotMinute;
  if (!minuteText && !half && !cjkMark && !hMark && !uhr && !meridiem) return undefined;
  let hour = Number(hourText);
  const minute = Number(minuteText ?? 0);
  const second = Number(colonSecond ?? cjkSecond ?? hSecond ?? 0);
  if (hour > 24 || minute > 59 || second > 60) return undefined;
  const afternoon = meridiem ? meridiem.toLowerCase() === "p" : half ? /下午|午後|中午|晚上/.test(half) : undefined;
  if (afternoon !== undefined) {
    // "12 AM" is midnight; 上午/下午 also come before 0
    if (hour > 12 || (meridiem && hour < 1)) return undefined;
    hour = (hour % 12) + (afternoon ? 12 : 0);
  }
  return { clock: { hour: hour % 24, minute, second }, end: CLOCK.lastIndex };
}

// A zone named right after a time: an IANA name, GMT±N or UTC±N, or an upper-case abbreviation, in parentheses or not.
const ZONE_AFTER = /\s*(?:\(\s*)?((?:[A-Z][A-Za-z_]+\/[A-Za-z0-9_/+-]+)|(?:(?:GMT|UTC)\s*[+-]\s*\d{1,2}(?::?\d{2})?)|[A-Z]{2,5}(?![\p{L}/]))/uy;

// The zone named at a place in a text, with where it ends, or undefined.
export function readZone(text: string, at: number): { zone: string; end: number } | undefined {
  ZONE_AFTER.lastIndex = at;
  const m = ZONE_AFTER.exec(text);
  return m ? { zone: m[1]!, end: ZONE_AFTER.lastIndex } : undefined;
}

// --- internal ---

function plain(word: string): string {
  return word
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/\.$/, "");
}

function nameIndex(table: readonly string[][], key: string): number | undefined {
  if (key.length < 3) return undefined;
  let found: number | undefined;
  for (let index = 0; index < table.length; index++) {
    if (!table[index]!.some((name) => name.startsWith(key))) continue;
    if (found !== undefined) return undefined;
    found = index;
  }
  return found;
}
