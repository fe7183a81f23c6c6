// Resolves the `@timer/*` aliases of tsconfig.base.json to the compiled libraries under dist/,
// so `node -r ./scripts/register-paths.js dist/apps/<role>/src/main.js` runs a built role.
const path = require('path');
const { register } = require('tsconfig-paths');
const { compilerOptions } = require('../tsconfig.base.json');

const paths = Object.fromEntries(
  Object.entries(compilerOptions.paths).map(([alias, targets]) => [alias, targets.map((t) => t.replace(/\.ts$/, ''))]),
);
register({ baseUrl: path.join(__dirname, '..', 'dist'), paths, addMatchAll: false });
