/**
 * Values from the API are data, never terminal commands. A subscription id holding `ESC[31m` or
 * `ESC]0;title BEL` would recolour the terminal or set its title if printed as it is, and a
 * right-to-left override would make a line read other than it is. So every such character is
 * printed as a visible escape, in one form everywhere: `\uXXXX`, four lowercase hex digits, as
 * JSON and JavaScript spell it (ESC is `\u001b`), which keeps `--json` output valid JSON.
 */

/**
 * The characters never printed as they are: C0 (U+0000 to U+001F, line feed and tab included),
 * DEL (U+007F), C1 (U+0080 to U+009F: U+009B is a CSI of its own), and the bidi embeddings and
 * overrides (U+202A to U+202E) and isolates (U+2066 to U+2069).
 */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** `text` with every control character (see {@link CONTROL_CHARACTERS}) as its `\uXXXX` escape. */
export function escapeControlCharacters(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
