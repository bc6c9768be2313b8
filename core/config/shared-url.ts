import { UuldanaError } from "../base/errors.js";

// The shared rest store's address (shared_rests, or UULDANA_SHARED_RESTS): a redis:// or rediss:// URL, checked once
// when the config is read, and its credentials kept out of everything uuldana says or writes.

export interface SharedStoreUrl {
  // the URL as given, credentials included: only the store's client ever sees it
  url: string;
  // the URL with its user and password blanked: what messages, the journal and the bench name
  shown: string;
  // the password and user name, for the session's redactor
  secrets: string[];
}

// The URL read from the config (file) or the environment variable; throws a configuration error naming where it came
// from and the form it needs. The value itself is never repeated in the error: it may hold a password.
export function parseSharedUrl(text: string, where: string): SharedStoreUrl {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "redis:" && url.protocol !== "rediss:") || !url.hostname) {
    throw new UuldanaError("E_CONFIG_INVALID", `${where}: shared_rests is not a redis:// or rediss:// URL with a host`, {
      hint: "give it as redis://[USER]:PASSWORD@HOST:PORT[/DB] (rediss:// for TLS), or remove it to keep rests on this machine only",
    });
  }
  const secrets = [url.password, url.username].map((part) => decodeURIComponent(part)).filter((part) => part.length >= 3);
  return { url: text, shown: showUrl(url), secrets };
}

// A store URL with its credentials blanked (*** for each part given).
function showUrl(url: URL): string {
  const user = url.username ? "***" : "";
  const password = url.password ? "***" : "";
  const credentials = user || password ? `${user}${password ? `:${password}` : ""}@` : "";
  return `${url.protocol}//${credentials}${url.host}${url.pathname === "/" ? "" : url.pathname}`;
}
