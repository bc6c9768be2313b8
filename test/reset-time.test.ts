import { describe, expect, it } from "vitest";

import { dateOrder, numericOrder } from "../core/reader/local-dates.js";
import { parseResetTime } from "../core/reader/reset-time.js";
import { cpuMs } from "./helpers.js";

// Reset times as agents print them. The dates in the user's locale are made by the runtime's own Intl, so the shapes
// are the real ones; every instant is for this clock (a Wednesday) and this local zone, plus the minute of margin.
const NOW = new Date("2026-07-08T12:00:00Z");
const ZONE = "Europe/Berlin";
const reset = (text: string, locale?: string): string | null => parseResetTime(text, { now: NOW, timeZone: ZONE, locale })?.at.toISOString() ?? null;
const withMargin = (instant: Date, seconds: boolean): string => {
  const unit = seconds ? 1000 : 60_000;
  return new Date(Math.floor(instant.getTime() / unit) * unit + 60_000).toISOString();
};

const LOCALES = ["en-US", "en-GB", "es-ES", "es-MX", "pt-BR", "pt-PT", "fr-FR", "fr-CA", "de-DE", "de-AT", "de-CH", "ja-JP", "zh-CN", "zh-TW"];

// Friday 10 July 2026, 11:52:07 in Berlin
const TARGET = new Date("2026-07-10T09:52:07Z");
const SHAPES: [Intl.DateTimeFormatOptions, boolean][] = [
  [{}, true],
  [{ dateStyle: "short", timeStyle: "short" }, false],
  [{ dateStyle: "medium", timeStyle: "short" }, false],
  [{ dateStyle: "long", timeStyle: "short" }, false],
  [{ dateStyle: "full", timeStyle: "short" }, false],
  [{ dateStyle: "medium", timeStyle: "medium" }, true],
  [{ dateStyle: "short", timeStyle: "medium", hour12: true }, true],
  [{ dateStyle: "medium", timeStyle: "short", hour12: true }, false],
  [{ dateStyle: "long", timeStyle: "short", hourCycle: "h23" }, false],
  [{ year: "numeric", month: "long", day: "numeric", hour: "numeric", minute: "2-digit" }, false],
  [{ year: "2-digit", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" }, false],
  [{ month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }, false],
  [{ month: "long", day: "numeric", hour: "numeric", minute: "2-digit", hour12: true }, false],
  [{ weekday: "short", month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }, false],
  [{ weekday: "long", hour: "numeric", minute: "2-digit" }, false],
  [{ weekday: "short", hour: "numeric", minute: "2-digit" }, false],
  [{ weekday: "long", hour: "numeric", minute: "2-digit", hour12: true }, false],
];

describe("reset times in the user's locale, as Intl prints them", () => {
  const cases = LOCALES.flatMap((locale) =>
    SHAPES.map(([options, seconds]) => [locale, TARGET.toLocaleString(locale, { timeZone: ZONE, ...options }), seconds] as const),
  );
  it.each(cases)("%s: try again at %s", (locale, printed, seconds) => {
    expect(reset(`You've hit your usage limit. Try again at ${printed}.`, locale)).toBe(withMargin(TARGET, seconds));
  });

  // the 15th of every month from July 2026 to June 2027, at 09:30 in Berlin
  const months = Array.from({ length: 12 }, (_, index) => {
    const month = (6 + index) % 12;
    const year = month >= 6 ? 2026 : 2027;
    return new Date(Date.UTC(year, month, 15, 12)).toISOString().slice(0, 10);
  });
  const monthCases = ["en-GB", "es-ES", "pt-BR", "fr-FR", "de-DE", "de-AT", "ja-JP", "zh-CN"].flatMap((locale) =>
    (["long", "short"] as const).flatMap((month) =>
      months.flatMap((day) => {
        const at = new Date(Date.parse(`${day}T09:30:00Z`) - offsetBerlin(day) * 60_000);
        return [
          [locale, at.toLocaleString(locale, { timeZone: ZONE, year: "numeric", month, day: "numeric", hour: "numeric", minute: "2-digit" }), at.toISOString()] as const,
          [locale, at.toLocaleString(locale, { timeZone: ZONE, month, day: "numeric", hour: "numeric", minute: "2-digit" }), at.toISOString()] as const,
        ];
      }),
    ),
  );
  it.each(monthCases)("%s: every month's name, resets %s", (locale, printed, at) => {
    expect(reset(`Usage limit reached · resets ${printed}`, locale)).toBe(withMargin(new Date(at), false));
  });

  // each day from Thursday 9 July to Wednesday 15 July 2026, at 09:30 in Berlin: the next such weekday
  const weekdayCases = LOCALES.flatMap((locale) =>
    (["long", "short"] as const).flatMap((weekday) =>
      [9, 10, 11, 12, 13, 14, 15].map((day) => {
        const at = new Date(Date.UTC(2026, 6, day, 7, 30));
        return [locale, at.toLocaleString(locale, { timeZone: ZONE, weekday, hour: "numeric", minute: "2-digit" }), at.toISOString()] as const;
      }),
    ),
  );
  it.each(weekdayCases)("%s: every weekday's name, resets %s", (locale, printed, at) => {
    expect(reset(`Weekly limit reached · resets ${printed}`, locale)).toBe(withMargin(new Date(at), false));
  });
});

describe("reset times written out", () => {
  it.each([
    // Spanish, Portuguese, French, German, with and without dots and accents
    ["10 de jul. de 2026, 11:52", undefined, "2026-07-10T09:53:00.000Z"],
    ["10 jul 2026 11:52", undefined, "2026-07-10T09:53:00.000Z"],
    ["10 de jul. de 2026 11:52", undefined, "2026-07-10T09:53:00.000Z"],
    ["10 de julio de 2026 a las 11:52", undefined, "2026-07-10T09:53:00.000Z"],
    ["10 de julho de 2026 às 11:52", undefined, "2026-07-10T09:53:00.000Z"],
    ["10 juil. 2026, 11:52", undefined, "2026-07-10T09:53:00.000Z"],
    ["10 juillet 2026 à 11:52", undefined, "2026-07-10T09:53:00.000Z"],
    ["10. Juli 2026 um 11:52", undefined, "2026-07-10T09:53:00.000Z"],
    ["10. Juli 2026 um 11:52 Uhr", undefined, "2026-07-10T09:53:00.000Z"],
    ["3 févr. 2027 à 9h", undefined, "2027-02-03T08:01:00.000Z"],
    ["3 fevr 2027 a 9h", undefined, "2027-02-03T08:01:00.000Z"],
    ["3. März 2027, 08:15", undefined, "2027-03-03T07:16:00.000Z"],
    ["3. Marz 2027, 08:15", undefined, "2027-03-03T07:16:00.000Z"],
    ["1er août 2026, 10:00", undefined, "2026-08-01T08:01:00.000Z"],
    ["1er août à 9h", undefined, "2026-08-01T07:01:00.000Z"],
    ["sábado, 11 de julio, 9:00 p. m.", undefined, "2026-07-11T19:01:00.000Z"],
    ["10 Jul 2026, 11:52 (UTC)", undefined, "2026-07-10T11:53:00.000Z"],
    // Japanese and Chinese
    ["2026年7月10日 11:52", undefined, "2026-07-10T09:53:00.000Z"],
    ["7月10日 11時52分", undefined, "2026-07-10T09:53:00.000Z"],
    ["2026/07/10 11:52", undefined, "2026-07-10T09:53:00.000Z"],
    ["7月10日 上午11:52", undefined, "2026-07-10T09:53:00.000Z"],
    ["7月10日 下午3:00", undefined, "2026-07-10T13:01:00.000Z"],
    ["2026/7/10 下午3:00:00", undefined, "2026-07-10T13:01:00.000Z"],
    ["2026/07/10 午後3:00", undefined, "2026-07-10T13:01:00.000Z"],
    ["7月10日(金) 午前9時", undefined, "2026-07-10T07:01:00.000Z"],
    ["2026年7月10日星期五 下午3点30分", undefined, "2026-07-10T13:31:00.000Z"],
    // weekdays with a time: the next one (Monday 13 July)
    ["lunes 9:00", undefined, "2026-07-13T07:01:00.000Z"],
    ["Montag 9:00", undefined, "2026-07-13T07:01:00.000Z"],
    ["Montag um 9 Uhr", undefined, "2026-07-13T07:01:00.000Z"],
    ["Mo., 9:00", undefined, "2026-07-13T07:01:00.000Z"],
    ["lundi à 9h", undefined, "2026-07-13T07:01:00.000Z"],
    ["segunda-feira, 9:00", undefined, "2026-07-13T07:01:00.000Z"],
    ["月曜日 9:00", undefined, "2026-07-13T07:01:00.000Z"],
    ["星期一 9:00", undefined, "2026-07-13T07:01:00.000Z"],
    ["周一 上午9:00", undefined, "2026-07-13T07:01:00.000Z"],
    ["週一 上午9:00", undefined, "2026-07-13T07:01:00.000Z"],
    ["周五 下午3:00", undefined, "2026-07-10T13:01:00.000Z"],
    ["9:00 (月)", undefined, "2026-07-13T07:01:00.000Z"],
    ["miercoles 9:00", undefined, "2026-07-15T07:01:00.000Z"],
    ["Weds 9:00", undefined, "2026-07-15T07:01:00.000Z"],
    ["mié., 9:00", undefined, "2026-07-15T07:01:00.000Z"],
  ])("resets %s", (printed, locale, at) => {
    expect(reset(`You've hit your usage limit. Try again at ${printed}.`, locale)).toBe(at);
  });

  it.each([
    // the numbers decide
    ["13/07/2026 9:00", undefined, "2026-07-13T07:01:00.000Z"],
    ["07/13/2026 9:00", undefined, "2026-07-13T07:01:00.000Z"],
    ["13.07.26, 09:00", undefined, "2026-07-13T07:01:00.000Z"],
    ["11/11/2026, 9:00", undefined, "2026-11-11T08:01:00.000Z"],
    // the locale decides
    ["11/12/2026, 9:00 AM", "en-US", "2026-11-12T08:01:00.000Z"],
    ["11/12/2026, 09:00", "en-GB", "2026-12-11T08:01:00.000Z"],
    ["11.12.2026, 09:00", "de-DE", "2026-12-11T08:01:00.000Z"],
    ["11-12-2026 09:00", "nl-NL", "2026-12-11T08:01:00.000Z"],
    ["11-12-2026 09:00", "en-US", "2026-11-12T08:01:00.000Z"],
    ["11/12/2026 9:00", "ja-JP", "2026-11-12T08:01:00.000Z"],
    ["11/12/26, 21:30", "fr-FR", "2026-12-11T20:31:00.000Z"],
    // seconds, 24-hour and 12-hour clocks, two- and four-digit years
    ["12/2/2026, 9:00:00 AM", "en-US", "2026-12-02T08:01:00.000Z"],
    ["12/2/2026, 9:00:30 PM", "en-US", "2026-12-02T20:01:30.000Z"],
    ["12/2/26 21:00", "en-US", "2026-12-02T20:01:00.000Z"],
  ])("reads the numeric date %s (locale %s)", (printed, locale, at) => {
    expect(reset(`Usage limit reached. Try again at ${printed}.`, locale)).toBe(at);
  });

  it.each([
    ["a numeric date the numbers leave open, with no locale", "Try again at 11/12/2026, 9:00 AM.", undefined],
    ["a numeric date in a locale the runtime does not know", "Try again at 11/12/2026, 9:00 AM.", "xx-YY"],
    ["a date whose year has passed", "Try again at 10 de jul. de 2025, 11:52.", "es-ES"],
    ["a numeric date that has passed", "Try again at 10.06.2026, 11:52.", "de-DE"],
    ["a date without a year, earlier today", "Try again at 8 Jul, 09:00.", "en-GB"],
    ["a day that does not exist", "Try again at 31.06.2026, 11:52.", "de-DE"],
    ["a version number", "Usage limit reached (v1.2.26).", "en-US"],
  ])("reads %s as no reset: the entry rests for cooldown_minutes", (_what, text, locale) => {
    expect(reset(text, locale)).toBeNull();
  });

  it("reads a day and month alone right after the words of a reset, in the locale's order", () => {
    expect(reset("The limits reset on 08/01.", "en-US")).toBe("2026-07-31T22:01:00.000Z");
    expect(reset("The limits reset on 08/01.", "en-GB")).toBe("2027-01-07T23:01:00.000Z");
    expect(reset("The limits reset on 08/01.")).toBeNull();
    expect(reset("Usage limit reached; 08/01 of the steps done.", "en-US")).toBeNull();
  });

  it("reads a date without a year whose day has passed as next year's", () => {
    expect(reset("Try again at 10 Jun, 11:52.", "en-GB")).toBe("2027-06-10T09:53:00.000Z");
  });

  it("takes out a date it cannot read before reading the rest, so its time is not read as today's", () => {
    expect(reset("Try again at 11/12/2026, 9:00 AM.")).toBeNull();
    expect(reset("The last limit ended 10/06/2025 11:52; this one resets Friday 9:00.", "fr-FR")).toBe("2026-07-10T07:01:00.000Z");
  });

  it("finds the reset on the lines after the message", () => {
    expect(reset("You've hit your usage limit.\nUpgrade your plan to continue, or try again at\n10 de jul. de 2026, 11:52.", "es-ES")).toBe("2026-07-10T09:53:00.000Z");
    expect(reset("Usage limit reached for all Pro models.\nAccess resets at 3:45 PM PDT.\n/stats model for usage details")).toBe("2026-07-08T22:46:00.000Z");
  });

  it("derives the order of day and month from the locale's own dates", () => {
    expect(["en-US", "en-GB", "de", "ja-JP", "zh-CN", "pt-BR", "fr-CA", "xx-YY"].map(dateOrder)).toEqual(["mdy", "dmy", "dmy", "ymd", "ymd", "dmy", "ymd", undefined]);
    expect([numericOrder(13, 7, undefined), numericOrder(7, 13, undefined), numericOrder(5, 5, undefined), numericOrder(5, 6, undefined), numericOrder(13, 13, "en-US")]).toEqual(["day-month", "month-day", "day-month", undefined, undefined]);
  });
});

describe("days named by a word", () => {
  // 12:00 UTC is 14:00 in Berlin
  it.each([
    ["Your limit resets tomorrow.", "2026-07-08T22:01:00.000Z"],
    ["Try again tomorrow.", "2026-07-08T22:01:00.000Z"],
    ["Try again tomorrow at 9am.", "2026-07-09T07:01:00.000Z"],
    ["Try again tomorrow at 9.", "2026-07-09T07:01:00.000Z"],
    ["Try again at 9:30 tomorrow.", "2026-07-09T07:31:00.000Z"],
    ["Try again tomorrow at noon.", "2026-07-09T10:01:00.000Z"],
    ["It resets tomorrow at 09:00 (UTC).", "2026-07-09T09:01:00.000Z"],
    ["Try again today at 3pm.", "2026-07-08T13:01:00.000Z"],
    ["Try again tonight at 11pm.", "2026-07-08T21:01:00.000Z"],
    ["Try again tonight at 1am.", "2026-07-08T23:01:00.000Z"],
    ["It resets tonight.", "2026-07-08T22:01:00.000Z"],
    ["It resets tonight at midnight.", "2026-07-08T22:01:00.000Z"],
    ["It resets at midnight (UTC).", "2026-07-09T00:01:00.000Z"],
    ["It resets at noon.", "2026-07-09T10:01:00.000Z"],
  ])("%s", (text, at) => {
    expect(reset(`You've hit your daily limit. ${text}`)).toBe(at);
  });

  it.each([
    ["today without a time", "You've hit your daily limit. It resets today."],
    ["a time today that has passed", "You've hit your daily limit. Try again today at 9am."],
    ["a day word no reset word stands before", "You've reached your daily limit. Please return tomorrow."],
    ["a day's possessive", "You've reached tomorrow's limit early."],
  ])("reads %s as no reset", (_what, text) => {
    expect(reset(text)).toBeNull();
  });
});

describe("waits and billing cycles", () => {
  it.each([
    ["Resets in 19hr.", "2026-07-09T07:01:00.000Z"],
    ["Try again in 2hrs 5mins.", "2026-07-08T14:06:00.000Z"],
    ["Try again in 1 day.", "2026-07-09T12:01:00.000Z"],
    ["Try again in 3 days 4 hours.", "2026-07-11T16:01:00.000Z"],
    ["Try again in 2 weeks.", "2026-07-22T12:01:00.000Z"],
    ["You've hit your usage limit. It resets when your monthly cycle ends on 11/17/2026.", "2026-11-16T23:01:00.000Z"],
    ["Your billing period resets on Dec 5.", "2026-12-04T23:01:00.000Z"],
    ["Your plan renews on the 1st.", "2026-07-31T22:01:00.000Z"],
    ["Please try again next month.", "2026-07-31T22:01:00.000Z"],
    ["Your credits come back next billing cycle.", "2026-07-31T22:01:00.000Z"],
    ["Your credits renew on the 8th of each month.", "2026-08-07T22:01:00.000Z"],
    ["Your credits refill on the 31st.", "2026-07-30T22:01:00.000Z"],
    ["Your quota resets on 2026-08-01.", "2026-07-31T22:01:00.000Z"],
    ["Your quota resets on 1 August.", "2026-07-31T22:01:00.000Z"],
    ["Your quota resets on 1. August.", "2026-07-31T22:01:00.000Z"],
    ["Your quota resets on 8月1日.", "2026-07-31T22:01:00.000Z"],
  ])("%s", (text, at) => {
    expect(reset(text)).toBe(at);
  });

  it.each([
    ["a cycle that ended", "You've hit your usage limit. It resets when your monthly cycle ends on 11/17/2025."],
    ["an ordinal that is no day", "Usage limit reached on the 3rd attempt."],
    ["a date without a time or a word that says it is when", "Usage limit reached. Report 8月1日 filed."],
  ])("reads %s as no reset", (_what, text) => {
    expect(reset(text)).toBeNull();
  });
});

describe("reset times on hostile text", () => {
  it.each([
    ["digits", "1".repeat(100_000)],
    ["days and de", "10 de ".repeat(20_000)],
    ["a long word before a time", `${"a".repeat(100_000)} 9:00`],
    ["month signs", "月".repeat(100_000)],
    ["slashes", "10/".repeat(30_000)],
    ["dots", "10.".repeat(30_000)],
    ["day words", "tomorrow ".repeat(10_000)],
    ["ordinals", "on the 1st ".repeat(10_000)],
    ["weekdays", "Montag ".repeat(15_000)],
    ["weekday signs", "星期".repeat(50_000)],
    ["times", "9:00 ".repeat(20_000)],
    ["numeric dates that have passed", "1/1/26 9:00 ".repeat(8_000)],
    ["named dates that have passed", "10 Jul 2020 9:00 ".repeat(6_000)],
    ["Chinese dates that have passed", "2020年7月10日 上午9:00 ".repeat(5_000)],
    ["weekdays with times", "Montag 9:00 ".repeat(8_000)],
  ])("reads 100 KB of %s in time proportional to its length", (_what, text) => {
    expect(cpuMs(() => parseResetTime(text, { now: NOW, timeZone: ZONE, locale: "en-US" }))).toBeLessThan(1000);
  });
});

// Berlin's offset from UTC on a day, in minutes.
function offsetBerlin(day: string): number {
  const noon = new Date(`${day}T12:00:00Z`);
  const local = new Date(noon.toLocaleString("en-US", { timeZone: ZONE }));
  const utc = new Date(noon.toLocaleString("en-US", { timeZone: "UTC" }));
  return (local.getTime() - utc.getTime()) / 60_000;
}
