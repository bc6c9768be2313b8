// A text as regular-expression source that matches it literally.
export const literal = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

// A manifest's limit phrase: a plain phrase (matched case-insensitively) or a /regular expression/ with flags.
export function compilePhrase(phrase: string): RegExp {
  const regex = /^\/(.+)\/([a-z]*)$/s.exec(phrase);
  if (regex) return new RegExp(regex[1]!, regex[2]);
  return new RegExp(literal(phrase).replace(/\s+/g, "\\s+"), "i");
}
