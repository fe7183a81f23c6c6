import { LightFirst } from './light-first';

const settled = async (p: Promise<void>): Promise<boolean> => {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done;
};

describe('LightFirst', () => {
  it('resolves at once for an instant without light calls out', async () => {
    expect(await settled(new LightFirst().answered(1_000))).toBe(true);
    expect(await settled(new LightFirst().allAnswered())).toBe(true);
  });

  it("waits for the light calls of that instant only, and forgets an instant once they are answered", async () => {
    const f = new LightFirst();
    const a = f.begin(1_000);
    const b = f.begin(1_000);
    const other = f.begin(2_000);
    const wait = f.answered(1_000, 10_000);
    a();
    a(); // idempotent: b is still out
    expect(await settled(wait)).toBe(false);
    b();
    expect(await settled(wait)).toBe(true);
    expect(f.size).toBe(1);
    const all = f.allAnswered(10_000);
    expect(await settled(all)).toBe(false);
    other();
    expect(await settled(all)).toBe(true);
    expect(f.size).toBe(0);
  });

  it('gives up waiting after maxMs', async () => {
    const f = new LightFirst();
    const end = f.begin(1_000);
    const from = Date.now();
    await f.answered(1_000, 20);
    expect(Date.now() - from).toBeGreaterThanOrEqual(15);
    end();
    expect(f.size).toBe(0);
  });
});
