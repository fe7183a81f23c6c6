import { PendingSends, type PendingSend } from './pending-sends';

function send(seq: number, deadline = Infinity): PendingSend & { result?: string } {
  const s: PendingSend & { result?: string } = {
    seq,
    context: seq.toString(36),
    frame: `f${seq}`,
    deadline,
    resolve: (id) => (s.result = `ok:${id}`),
    reject: (e) => (s.result = `err:${e.message}`),
  };
  return s;
}

describe('PendingSends', () => {
  it('keeps at most maxInFlight sends in flight and hands out the rest in FIFO order', () => {
    const pending = new PendingSends(1, 2);
    for (let i = 1; i <= 4; i++) pending.enqueue(send(i));
    expect(pending.dispatch(0)?.seq).toBe(1);
    expect(pending.dispatch(0)?.seq).toBe(2);
    expect(pending.dispatch(0)).toBeUndefined();
    expect(pending.outstanding).toBe(4);
    expect(pending.complete(0, '2')?.seq).toBe(2);
    expect(pending.complete(0, '2')).toBeUndefined();
    expect(pending.dispatch(0)?.seq).toBe(3);
    expect(pending.inFlightTotal).toBe(2);
    expect(pending.waitingCount).toBe(1);
  });

  it('puts a lost connection\'s sends back in front, oldest first, across connections', () => {
    const pending = new PendingSends(2, 10);
    for (let i = 1; i <= 6; i++) pending.enqueue(send(i));
    const slotOf = [0, 1, 0, 1];
    for (const slot of slotOf) pending.dispatch(slot); // 1,3 on slot 0; 2,4 on slot 1
    expect(pending.requeue(0)).toBe(2);
    expect(pending.requeue(1)).toBe(2);
    const order: number[] = [];
    for (let s = pending.dispatch(0); s; s = pending.dispatch(0)) order.push(s.seq);
    expect(order).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('expires sends past their deadline, in flight or waiting, and only those', () => {
    const pending = new PendingSends(1, 1);
    pending.enqueue(send(1, 100));
    pending.enqueue(send(2, 200));
    pending.enqueue(send(3, 300));
    pending.dispatch(0);
    expect(pending.expire(99)).toEqual([]);
    expect(pending.expire(200).map((s) => s.seq)).toEqual([1, 2]);
    expect(pending.outstanding).toBe(1);
    expect(pending.dispatch(0)?.seq).toBe(3);
  });

  it('flush waits for the sends issued before it, not for later ones', async () => {
    const pending = new PendingSends(1, 10);
    pending.enqueue(send(1));
    pending.enqueue(send(2));
    pending.dispatch(0);
    let flushed = false;
    const flush = pending.flush(2).then(() => (flushed = true));
    pending.enqueue(send(3));
    pending.settled(pending.complete(0, '1')!);
    await Promise.resolve();
    expect(flushed).toBe(false);
    pending.dispatch(0);
    pending.settled(pending.complete(0, '2')!);
    await flush;
    expect(flushed).toBe(true);
    expect(pending.outstanding).toBe(1);
    await expect(new PendingSends(1, 1).flush(0)).resolves.toBeUndefined();
  });

  it('drain hands back everything outstanding and settles flushes', async () => {
    const pending = new PendingSends(2, 1);
    pending.enqueue(send(1));
    pending.enqueue(send(2));
    pending.dispatch(1);
    const flush = pending.flush(2);
    const drained = pending.drain();
    expect(drained.map((s) => s.seq).sort()).toEqual([1, 2]);
    drained.forEach((s) => pending.settled(s));
    await flush;
    expect(pending.outstanding).toBe(0);
  });
});
