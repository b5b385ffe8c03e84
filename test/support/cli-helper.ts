import { runCli } from '../../src/cli/program.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the command line in-process against the store the env names. */
export async function cli(env: Record<string, string>, ...argv: string[]): Promise<CliResult> {
  return cliOn({ interactive: false }, env, ...argv);
}

/** The same, as if standard error were a terminal (`interactive`) or not. */
export async function cliOn(terminal: { interactive: boolean }, env: Record<string, string>, ...argv: string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    env,
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    interactive: terminal.interactive,
  });
  return { code, stdout, stderr };
}
