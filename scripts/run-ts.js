#!/usr/bin/env node
// Builds the workspace (incremental tsc) and runs one compiled entry point with the aliases resolved:
//   node scripts/run-ts.js bench/transport/transport.bench.ts [args...]
const { execFileSync } = require('child_process');
const path = require('path');

const [entry, ...args] = process.argv.slice(2);
if (!entry || !entry.endsWith('.ts')) {
  process.stderr.write('usage: node scripts/run-ts.js <path/to/file.ts> [args...]\n');
  process.exit(2);
}
const root = path.join(__dirname, '..');
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
require('./register-paths');
process.argv = [process.argv[0], path.join(root, 'dist', entry.replace(/\.ts$/, '.js')), ...args];
require(process.argv[1]);
