import { CONTROL, LONE_SURROGATE, TERMINAL_CONTROL, TERMINAL_CONTROL_BUT_LAYOUT } from '../platform/control-characters.js';
import { CliError } from './errors.js';

const escaped = (character: string) => {
  const code = character.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/** One value (a name, a reference) as it is printed: every control or bidi character shown as \xNN or \uNNNN, so it cannot forge or reorder a line. */
export function printableValue(value: string): string {
  return value.replace(TERMINAL_CONTROL, escaped);
}

/** Text the CLI prints: its own line breaks and tabs kept, every other control character shown as \xNN. */
export function printable(text: string): string {
  return text.replace(TERMINAL_CONTROL_BUT_LAYOUT, escaped);
}

/** A name given on the command line, refused when it holds a control character, as the admin API refuses it. */
export function plainName(name: string, flag: string): string {
  if (CONTROL.test(name) || LONE_SURROGATE.test(name)) {
    throw new CliError(`${flag} must not hold control characters (such as ESC, a line break or a bidirectional override).`);
  }
  return name;
}
