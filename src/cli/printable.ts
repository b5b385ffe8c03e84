import { CONTROL, TERMINAL_CONTROL, TERMINAL_CONTROL_BUT_LAYOUT } from '../platform/control-characters.js';
import { CliError } from './errors.js';

const escaped = (character: string) => `\\x${character.charCodeAt(0).toString(16).padStart(2, '0')}`;

/** One value (a name, a reference) as it is printed: every control character shown as \xNN, so it cannot forge a line. */
export function printableValue(value: string): string {
  return value.replace(TERMINAL_CONTROL, escaped);
}

/** Text the CLI prints: its own line breaks and tabs kept, every other control character shown as \xNN. */
export function printable(text: string): string {
  return text.replace(TERMINAL_CONTROL_BUT_LAYOUT, escaped);
}

/** A name given on the command line, refused when it holds a control character, as the admin API refuses it. */
export function plainName(name: string, flag: string): string {
  if (CONTROL.test(name)) throw new CliError(`${flag} must not hold control characters (such as ESC or a line break).`);
  return name;
}
