// These patterns exist to find control characters, which the regex lint rule rightly flags elsewhere.

/**
 * Any C0 control character or DEL, a bidirectional mark or override (U+200E/F, U+202A-202E,
 * U+2066-2069: they reorder a printed line) or a line or paragraph separator (U+2028/9): none
 * may be in an identifier, a name or a reference.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
export const CONTROL = /[\u0000-\u001f\u007f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** A UTF-16 surrogate without its pair: no UTF-8 store can hold it (PostgreSQL refuses it). */
export const LONE_SURROGATE = /[\ud800-\udfff]/u;

/** Those text may not hold: all but tab, line feed and carriage return. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
export const CONTROL_IN_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** What a terminal acts on (ESC sequences recolour it, CR rewrites a line, bidi marks reorder it), C1 included. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
export const TERMINAL_CONTROL = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** Those, but line feed and tab, which lay out a CLI's own text. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
export const TERMINAL_CONTROL_BUT_LAYOUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
