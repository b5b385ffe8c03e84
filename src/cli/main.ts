#!/usr/bin/env node
import { runCli } from './run.js';

const exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  interactive: Boolean(process.stderr.isTTY),
});
if (exitCode !== 0) process.exitCode = exitCode;
