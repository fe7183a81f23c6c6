// Copies the Lua scripts of libs/redis into dist/ beside their compiled loader: tsc emits only
// JavaScript, and the roles started from dist/ (e2e, the image) load the scripts by file name.
//   node scripts/copy-lua.js [OUT_DIR]     (default dist)
const fs = require('fs');
const path = require('path');

const ROOT = path.join(__dirname, '..');
const SOURCE = path.join('libs', 'redis', 'src', 'lib', 'lua');

/** Copies every `.lua` of libs/redis/src/lib/lua to `<outDir>/libs/redis/src/lib/lua`. */
function copyLua(outDir = path.join(ROOT, 'dist')) {
  const target = path.join(outDir, SOURCE);
  fs.mkdirSync(target, { recursive: true });
  for (const file of fs.readdirSync(path.join(ROOT, SOURCE))) {
    if (file.endsWith('.lua')) fs.copyFileSync(path.join(ROOT, SOURCE, file), path.join(target, file));
  }
}

module.exports = { copyLua };

if (require.main === module) copyLua(process.argv[2] ? path.resolve(process.argv[2]) : undefined);
