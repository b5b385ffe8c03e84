import { existsSync } from 'node:fs';

/** Debian's Chromium, which the browser tests drive with playwright-core (.ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium';

/** Headless, and nothing of its own on the network: the tests see only the requests the page makes. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A describe's skip option: the reason, when Chromium is not installed. */
export const skipWithoutChromium: string | false = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is not installed (apt-get install chromium; .ci/run installs it)`;
