import { describe, expect, it } from "vitest";

import { localeTag, userLocale } from "../core/base/locale.js";

// The locale a program started with an environment prints its dates in.
describe("the user's locale", () => {
  it.each([
    [{ LC_ALL: "de_DE.UTF-8", LC_TIME: "en_US.UTF-8", LANG: "fr_FR.UTF-8" }, "de-DE"],
    [{ LC_TIME: "en_GB.UTF-8", LANG: "fr_FR.UTF-8" }, "en-GB"],
    [{ LANG: "pt_BR.UTF-8" }, "pt-BR"],
    [{ LC_ALL: "", LC_TIME: "", LANG: "es_ES" }, "es-ES"],
    [{ LANG: "sr_RS@latin" }, "sr-RS"],
    [{ LANG: "ja_JP.eucJP" }, "ja-JP"],
    [{ LANG: "zh_TW.Big5" }, "zh-TW"],
    [{ LANG: "de" }, "de"],
    [{ LC_ALL: "C", LANG: "de_DE.UTF-8" }, undefined],
    [{ LC_ALL: "C.UTF-8" }, undefined],
    [{ LANG: "POSIX" }, undefined],
    [{ LANG: "not a locale!" }, undefined],
    [{}, "nl-NL"],
    [{ LC_ALL: "" }, "nl-NL"],
  ])("from %j is %s", (env, locale) => {
    expect(userLocale(env, "nl-NL")).toBe(locale);
  });

  it("is the runtime's own default locale when the environment names none", () => {
    expect(userLocale({})).toBe(Intl.DateTimeFormat().resolvedOptions().locale);
  });

  it("reads POSIX names as BCP 47 tags", () => {
    expect(["en_US.UTF-8", "fr_CA", "C", "", "_"].map(localeTag)).toEqual(["en-US", "fr-CA", undefined, undefined, undefined]);
  });
});
