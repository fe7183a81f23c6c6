#!/usr/bin/env node
// Builds the workspace when a source changed (scripts/ensure-built.js) and runs one compiled entry
// point with the aliases resolved:
//   node scripts/run-ts.js bench/transport/transport.bench.ts [args...]
const path = require('path');
const { ensureBuilt } = require('./ensure-built');

const [entry, ...args] = process.argv.slice(2);
if (!entry || !entry.endsWith('.ts')) {
  process.stderr.write('usage: node scripts/run-ts.js <path/to/file.ts> [args...]\n');
  process.exit(2);
}
const compiled = path.join(__dirname, '..', 'dist', entry.replace(/\.ts$/, '.js'));
try {
  ensureBuilt({ entry: compiled });
} catch {
  process.exit(1); // tsc has printed why
}
require('./register-paths');
process.argv = [process.argv[0], compiled, ...args];
require(process.argv[1]);
