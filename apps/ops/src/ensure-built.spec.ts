import { spawnSync } from 'child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

// `npm run ops` builds through scripts/ensure-built.js (scripts/run-ts.js calls it). A tiny project
// with the same incremental settings as tsconfig.build.json shows when it compiles and when it does
// not. Each compile starts tsc (seconds on a busy machine), so the cases share one project and run
// in order.
describe('scripts/ensure-built.js (the build step of `npm run ops`)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ensure-built-'));
  const tsconfig = join(dir, 'tsconfig.json');
  const source = join(dir, 'src', 'main.ts');
  const compiled = join(dir, 'dist', 'main.js');
  const buildInfo = join(dir, 'dist', '.tsbuildinfo');
  const script = join(__dirname, '..', '..', '..', 'scripts', 'ensure-built.js');
  /** Runs the build step; the compiler's exit status (0: up to date or built). */
  const build = () => spawnSync(process.execPath, [script, tsconfig, compiled], { encoding: 'utf8' }).status;
  const mtimes = () => ({ js: statSync(compiled).mtimeMs, info: statSync(buildInfo).mtimeMs });
  /** Dates a file `seconds` back, so that a write during a test is newer whatever the clock's resolution. */
  const age = (file: string, seconds: number) => utimesSync(file, (Date.now() - seconds * 1000) / 1000, (Date.now() - seconds * 1000) / 1000);
  const version = (v: string) => writeFileSync(source, `export const version: string = ${v};\n`);

  beforeAll(() => {
    mkdirSync(join(dir, 'src'));
    writeFileSync(
      tsconfig,
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022', module: 'commonjs', strict: true, types: [], rootDir: 'src', outDir: 'dist',
          incremental: true, tsBuildInfoFile: 'dist/.tsbuildinfo',
        },
        include: ['src/**/*.ts'],
      }),
    );
    version("'one'");
    age(source, 60);
    age(tsconfig, 60);
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('compiles a fresh checkout', () => {
    expect(build()).toBe(0);
    expect(readFileSync(compiled, 'utf8')).toContain("'one'");
    age(compiled, 30);
    age(buildInfo, 30);
  });

  it('leaves dist alone when no source changed', () => {
    const before = mtimes();
    expect(build()).toBe(0);
    expect(mtimes()).toEqual(before);
  });

  it('decides by modification times: an input older than the build info is not even read', () => {
    // tsc -p, the old build step, would re-check this program and fail; --build does not start it.
    version('2');
    age(source, 60);
    expect(build()).toBe(0);
  });

  it('rebuilds when a source changed', () => {
    version("'two'");
    expect(build()).toBe(0);
    expect(readFileSync(compiled, 'utf8')).toContain("'two'");
  });

  it('rebuilds when the compiled entry point is gone, though the build info is current', () => {
    unlinkSync(compiled);
    expect(build()).toBe(0);
    expect(readFileSync(compiled, 'utf8')).toContain("'two'");
  });

  it('refuses a source with a type error, on every run', () => {
    version('2');
    expect(build()).toBe(1);
    expect(build()).toBe(1);
  });
});
