import { type Config, loadConfig } from '../config.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';
import { printable } from './printable.js';

export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Whether stderr is a terminal: progress lines are shown only there. */
  interactive: boolean;
}

/** What every command is given: the configuration, the store it names, and where to print. */
export class CliContext {
  /** Set by a command that ran until told to stop (serve): how it ended. */
  exitCode = 0;
  private loaded: Config | undefined;

  constructor(readonly io: CliIo) {}

  /** The configuration from the environment, read once, when a command first needs it. */
  config(): Config {
    this.loaded ??= loadConfig(this.io.env);
    return this.loaded;
  }

  /** Runs `action` on the store the configuration names, closing it afterwards. */
  async withStore<T>(action: (store: Store) => Promise<T>): Promise<T> {
    const store = await openStore(this.config());
    try {
      return await action(store);
    } finally {
      await store.close();
    }
  }

  /** Prints a result: as JSON with --json, else as `render` puts it. */
  output<T>(json: boolean | undefined, result: T, render: (result: T) => string): void {
    this.io.stdout(`${json ? JSON.stringify(result, null, 2) : printable(render(result))}\n`);
  }

  /** Resolves with the first SIGTERM or SIGINT: a long-running command then stops. */
  untilStopSignal(): Promise<NodeJS.Signals> {
    return new Promise((resolve) => {
      const stop = (signal: NodeJS.Signals) => {
        process.off('SIGTERM', stop);
        process.off('SIGINT', stop);
        resolve(signal);
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
  }
}
