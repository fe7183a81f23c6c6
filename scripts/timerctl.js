#!/usr/bin/env node
// `npx timerctl ...` from the checkout (package.json "bin"): brings dist/ up to date when a source is
// newer (scripts/ensure-built.js, ~0.2 s when nothing changed), then runs the built CLI. The image runs
// it through its entry point instead (`timer timerctl ...`), without building.
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const root = path.join(__dirname, '..');
const entry = path.join(root, 'dist', 'apps', 'timerctl', 'src', 'main.js');
try {
  // The compiler's messages go to stderr: stdout carries the command's output (-o json).
  execFileSync(process.execPath, [path.join(__dirname, 'ensure-built.js'), path.join(root, 'tsconfig.build.json'), entry], { stdio: ['ignore', 2, 2] });
} catch {
  if (!fs.existsSync(entry)) process.exit(3);
  process.stderr.write('timerctl: the build failed (above); running the previous build\n');
}
require('./register-paths');
require(entry);
