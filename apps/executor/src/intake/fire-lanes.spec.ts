import { FireLane, INTAKE_FIRES_PER_SLOT } from './fire-lanes';

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

  describe('intake', () => {
    it(`takes in up to ${INTAKE_FIRES_PER_SLOT} fires a slot at once; later messages wait, in arrival order, for fires to be given back`, async () => {
      const lane = new FireLane(4); // takes in 8 fires
      expect(lane.intakeLimit).toBe(4 * INTAKE_FIRES_PER_SLOT);
      expect(lane.intakeLimit).toBe(8);
      expect(lane.takeIn(5)).toBeUndefined();
      expect(lane.takeIn(3)).toBeUndefined();
      const order: string[] = [];
      const big = lane.takeIn(4)!.then(() => order.push('big'));
      const small = lane.takeIn(1)!.then(() => order.push('small')); // fits, but does not pass the earlier message
      await tick();
      expect(order).toEqual([]);
      expect([lane.takenIn, lane.waitingToTakeIn]).toEqual([8, 2]);
      lane.giveBack();
      lane.giveBack();
      lane.giveBack();
      await tick();
      expect(order).toEqual([]); // 5 held: 4 more do not fit yet
      lane.giveBack();
      await big;
      expect([lane.takenIn, lane.waitingToTakeIn]).toEqual([8, 1]);
      lane.giveBack();
      await small;
      expect(order).toEqual(['big', 'small']);
      expect([lane.takenIn, lane.waitingToTakeIn]).toEqual([8, 0]);
    });

    it('takes in a message larger than the limit alone, once nothing else is held', async () => {
      const lane = new FireLane(1);
      expect(lane.takeIn(1)).toBeUndefined();
      let taken = false;
      const huge = lane.takeIn(100)!.then(() => (taken = true));
      await tick();
      expect(taken).toBe(false);
      lane.giveBack();
      await huge;
      expect(lane.takenIn).toBe(100);
      expect(lane.takeIn(1)).toBeInstanceOf(Promise); // nothing else while it is held
    });
  });
});

describe('FireLane slots', () => {
  it('runs at most its size at once and lets the waiting in in arrival order', async () => {
    const lane = new FireLane(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const work = (i: number) => lane.run(async () => {
      started.push(i);
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      if (i === 2) throw new Error('boom');
      return i;
    });
    const results = await Promise.allSettled([0, 1, 2, 3, 4].map(work));
    expect(most).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(lane.inFlight).toBe(0);
  });

  it('hands slots over in order through a long queue and ends with none held', async () => {
    const lane = new FireLane(3);
    const order: number[] = [];
    await Promise.all(Array.from({ length: 5_000 }, (_, i) => lane.run(async () => {
      order.push(i);
      await Promise.resolve();
    })));
    expect(order).toEqual(Array.from({ length: 5_000 }, (_, i) => i));
    expect([lane.inFlight, lane.queued]).toEqual([0, 0]);
  });
});
