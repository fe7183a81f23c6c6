// Brings dist/ up to date with the sources, and does nothing when it already is: `tsc --build` compares
// the newest input (sources and tsconfig files) with the incremental build info (dist/.tsbuildinfo,
// which `npm run build` writes too) and compiles only when an input is newer. That check costs
// ~0.2 s where a plain `tsc -p` spends ~3 s re-checking an unchanged program.
//   node scripts/ensure-built.js [TSCONFIG [ENTRY]]     (default tsconfig.build.json)
const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { copyLua } = require('./copy-lua');

const BUILD_TSCONFIG = path.join(__dirname, '..', 'tsconfig.build.json');

/**
 * Compiles `tsconfig` if any of its inputs changed since the last build; `entry`, when given, is a
 * compiled file that must exist (the build info alone does not notice a deleted output). Throws when
 * the compiler fails; its messages went to this process's output.
 */
function ensureBuilt({ tsconfig = BUILD_TSCONFIG, entry } = {}) {
  const args = [require.resolve('typescript/bin/tsc'), '--build', tsconfig];
  if (entry && !fs.existsSync(entry)) args.push('--force');
  execFileSync(process.execPath, args, { stdio: 'inherit', cwd: path.dirname(tsconfig) });
  // tsc emits JavaScript only; the Lua scripts are copied beside their loader on every run (cheap, and
  // a build info that says "up to date" knows nothing of them).
  if (path.resolve(tsconfig) === BUILD_TSCONFIG) copyLua();
}

module.exports = { ensureBuilt };

if (require.main === module) {
  const [tsconfig, entry] = process.argv.slice(2).map((p) => path.resolve(p));
  try {
    ensureBuilt({ tsconfig, entry });
  } catch {
    process.exit(1);
  }
}
