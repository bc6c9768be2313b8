import type { Env } from "./paths.js";

// The user's locale as a program started with this environment sees it for dates: LC_ALL, then LC_TIME, then LANG
// (the first one set and not empty decides), else the runtime's own default. POSIX names such as "de_DE.UTF-8" become
// BCP 47 tags ("de-DE"); "C" and "POSIX" name no locale, and neither does a name that is not one.
export function userLocale(env: Env, runtimeDefault: string = Intl.DateTimeFormat().resolvedOptions().locale): string | undefined {
  for (const name of ["LC_ALL", "LC_TIME", "LANG"]) {
    const value = env[name];
    if (value) return localeTag(value);
  }
  return runtimeDefault;
}

// "de_DE.UTF-8" → "de-DE", "sr_RS@latin" → "sr-RS", "C.UTF-8" → undefined.
export function localeTag(posix: string): string | undefined {
  const name = posix.replace(/[.@].*$/, "");
  if (!name || name === "C" || name === "POSIX") return undefined;
  try {
    return Intl.getCanonicalLocales(name.replace(/_/g, "-"))[0];
  } catch {
    return undefined;
  }
}
