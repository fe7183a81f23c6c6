import { Inject, Injectable } from '@nestjs/common';
import { fireId, parseFireId } from '@timer/contracts';
import { TaskEntity, TaskRepository, TaskStatusValue, TimerRepository } from '@timer/dal';
import { CLOCK, NowClock } from '@timer/platform';
import { assertAppAccess, assertTimerAccess, Principal } from '../auth/principal';
import { badRequest, notFound } from '../common/errors';
import { RecordsQuery } from './dto/records.query';
import { AttemptView, TaskView } from './dto/task.view';

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * Fire records: of one fire (`fireID`), of one timer (`timerID`, deleted ones too: the records outlive
 * the timer), or of a whole app. A timer or fire of another app answers 404, as one that never was.
 */
@Injectable()
export class TasksService {
  constructor(
    private readonly timers: TimerRepository,
    private readonly tasks: TaskRepository,
    @Inject(CLOCK) private readonly clock: NowClock,
  ) {}

  async records(p: Principal, q: RecordsQuery): Promise<{ data: TaskView[]; total: number }> {
    const fire = q.fireID === undefined ? undefined : parseFireId(q.fireID);
    if (fire === null) throw badRequest('fireID must be a fire id: <timerId>-<runAtMs> (as in X-Timer-Fire-Id)');
    if (fire && q.timerID !== undefined && BigInt(fire.timerId) !== BigInt(q.timerID)) throw badRequest(`fireID ${q.fireID} is not a fire of timerID ${q.timerID}`);
    if (q.from !== undefined && q.to !== undefined && q.to <= q.from) throw badRequest('to must be after from');
    const timerId = fire?.timerId ?? q.timerID;
    if (timerId === undefined) assertAppAccess(p, q.app);
    else {
      assertTimerAccess(p, q.app);
      if (!(await this.timers.existed(q.app, timerId))) throw notFound('timer not found');
    }
    const filter = {
      app: q.app,
      timerId,
      runAt: fire?.runAt,
      status: q.status as TaskStatusValue | undefined,
      fromMs: q.from,
      toMs: q.to,
      // A fire asked for by its id is shown whatever its state; listings leave the future out by default.
      includePending: q.includePending === true || fire !== undefined,
      nowMs: this.clock.now(),
    };
    const { items, total } = await this.tasks.records(filter, { page: q.pageIndex, size: q.pageSize });
    if (fire && total === 0 && !(await this.tasks.find(fire.timerId, fire.runAt))) throw notFound('fire not found');
    return { data: items.map(toTaskView), total };
  }
}

export function toTaskView(t: TaskEntity): TaskView {
  const runAt = Number(t.runAt);
  return {
    fireId: fireId(String(t.timerId), runAt),
    timerID: Number(t.timerId),
    app: t.app,
    runAt,
    status: t.status,
    attempt: t.attempt ?? 0,
    httpStatus: num(t.httpStatus),
    costMs: num(t.costMs),
    latenessMs: num(t.latenessMs),
    error: t.error ?? null,
    output: t.output ?? null,
    backfill: Boolean(t.backfill),
    attempts: (Array.isArray(t.attempts) ? t.attempts : []).map(toAttemptView),
  };
}

function toAttemptView(a: Partial<AttemptView>): AttemptView {
  const r = a.response;
  return {
    attempt: Number(a.attempt),
    startedAt: Number(a.startedAt),
    httpStatus: num(a.httpStatus),
    costMs: num(a.costMs),
    error: a.error ?? null,
    response: r ? { status: Number(r.status), headers: r.headers ?? {}, body: r.body ?? '', truncated: Boolean(r.truncated) } : null,
  };
}
