import { Injectable } from '@nestjs/common';
import { fireId } from '@timer/contracts';
import { TaskEntity, TaskRepository } from '@timer/dal';
import { Principal } from '../auth/principal';
import { TimersService } from '../timers/timers.service';
import { RecordsQuery } from './dto/records.query';
import { TaskView } from './dto/task.view';

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** Fire records of a timer; the timer must be live and visible to the caller (404 otherwise). */
@Injectable()
export class TasksService {
  constructor(
    private readonly timers: TimersService,
    private readonly tasks: TaskRepository,
  ) {}

  async records(p: Principal, q: RecordsQuery): Promise<{ data: TaskView[]; total: number }> {
    await this.timers.find(p, { id: q.timerID, app: q.app });
    const { items, total } = await this.tasks.records(q.timerID, { page: q.pageIndex, size: q.pageSize, status: q.status });
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
  };
}
