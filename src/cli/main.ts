#!/usr/bin/env node
import { runCli } from './program.js';

// The one place the process ends: with the command's exit code once it has finished (a stopped
// service included, whose closed handles may not all have let go of the event loop).
const exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  interactive: Boolean(process.stderr.isTTY),
});
process.exit(exitCode);
