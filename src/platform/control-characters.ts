// These patterns exist to find control characters, which the regex lint rule rightly flags elsewhere.

/** Any C0 control character or DEL: none may be in an identifier, a name or a reference. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
export const CONTROL = /[\u0000-\u001f\u007f]/;

/** Those text may not hold: all but tab, line feed and carriage return. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
export const CONTROL_IN_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** What a terminal acts on (ESC sequences recolour it, CR rewrites a line), C1 included. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
export const TERMINAL_CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** Those, but line feed and tab, which lay out a CLI's own text. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
export const TERMINAL_CONTROL_BUT_LAYOUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
