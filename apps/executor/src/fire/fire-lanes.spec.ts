import { FireLane } from './fire-lanes';

/** A unit of work that finishes when the test says so. */
function gate() {
  let open!: () => void;
  const done = new Promise<void>((r) => (open = r));
  return { done, open };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('FireLane', () => {
  it('works at most `size` fires at once, the rest in arrival order', async () => {
    const lane = new FireLane(2);
    const started: number[] = [];
    const gates = [gate(), gate(), gate(), gate()];
    const runs = gates.map((g, i) => lane.run(async () => (started.push(i), g.done)));
    await tick();
    expect(started).toEqual([0, 1]);
    expect(lane.queued).toBe(2);
    gates[1].open();
    await tick();
    expect(started).toEqual([0, 1, 2]);
    gates.forEach((g) => g.open());
    await Promise.all(runs);
    expect(started).toEqual([0, 1, 2, 3]);
    expect(lane.inFlight).toBe(0);
  });

  it('starts a fire of a yielding lane only when no fire waits in the lane it yields to', async () => {
    const due = new FireLane(1);
    const catchUp = new FireLane(5, due);
    const started: string[] = [];
    const a = gate();
    const b = gate();
    const first = due.run(async () => (started.push('due-1'), a.done));
    const second = due.run(async () => (started.push('due-2'), b.done)); // waits for the slot
    const late = catchUp.run(async () => void started.push('late'));
    await tick();
    expect(started).toEqual(['due-1']);
    a.open(); // due-2 takes the slot: nothing waits any more
    await first;
    await tick();
    await late;
    expect(started).toEqual(['due-1', 'due-2', 'late']);
    b.open();
    await second;
  });

  it('starts a yielding lane\'s fire at once when nothing waits in the other lane', async () => {
    const due = new FireLane(1);
    const catchUp = new FireLane(1, due);
    const busy = gate();
    const holding = due.run(() => busy.done); // busy, but nothing waiting
    await expect(catchUp.run(async () => 'ran')).resolves.toBe('ran');
    busy.open();
    await holding;
  });
});
