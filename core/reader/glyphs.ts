// What agents draw that is not words: the marks before a message, spinner frames, prompt marks, the lines of a
// panel. Told by Unicode category and shape, not by any one agent's set, so an agent nobody described is read the
// same way. Each is regular-expression source for the u flag.

// Box drawing and block elements (the inside of a character class): the borders of panels, and bars.
export const BORDER = "\\u2500-\\u257f\\u2580-\\u259f";

// Braille patterns (the inside of a character class): spinners and logos drawn in dots.
export const BRAILLE = "\\u2800-\\u28ff";

// One marker glyph: any symbol outside ASCII (categories So and Sm: dingbats, geometric shapes, arrows, stars,
// technical signs, emoji, and with them borders and braille), the bullets and dots of punctuation (• ‣ ⁃ · ※ …),
// the prompt marks > › ❯ ❱, the asterisk, and the selector that turns a symbol into an emoji. ASCII's other signs
// (+ - = < | ~) are left to the places that mean them, and quotation marks (" ' ` “ ” ‘ ’ « ») are never markers:
// the reader weighs them as someone quoting.
export const MARKER = "(?:[\\p{So}\\u2022\\u2023\\u2043\\u00b7\\u203b\\u2026>\\u203a\\u276f\\u2771*\\ufe0f]|[^\\P{Sm}\\0-\\x7f])";

// One glyph a spinner or a progress bar may be drawn with: a marker glyph, any math sign or dash, and the ASCII
// spinner's bars and dots (| / \\ . and the hyphen among the dashes).
export const SPINNER_FRAME = `(?:${MARKER}|[\\p{Sm}\\p{Pd}\\u2027|/\\\\.])`;

