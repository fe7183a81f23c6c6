import { Controller } from '@nestjs/common';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { TOPICS } from '@timer/contracts';
import { PulsarContext } from '@timer/pulsar-transport';
import { FireLanes } from '../intake/fire-lanes';
import { FireService } from './fire.service';

/**
 * Task messages from the trigger and the roles that create due fires (`timer-tasks`, and
 * `timer-tasks-catchup` for fires already late when published) and the executor's own retries and
 * rechecks (`timer-task-retries`); a message carries one fire or many (`{tasks: [...]}`), each worked on
 * in a slot of its topic's lane. The transport acks when the returned promise resolves (the outcome is
 * written) and nacks when it rejects.
 */
@Controller()
export class TaskHandler {
  constructor(
    private readonly fires: FireService,
    private readonly lanes: FireLanes,
  ) {}

  @EventPattern(TOPICS.tasks)
  async onTask(@Payload() data: unknown, @Ctx() ctx: PulsarContext): Promise<void> {
    await this.fires.handleMessage(data, ctx.getProperties(), this.lanes.tasks, ctx.getRedeliveryCount());
  }

  @EventPattern(TOPICS.catchUp)
  async onCatchUp(@Payload() data: unknown, @Ctx() ctx: PulsarContext): Promise<void> {
    await this.fires.handleMessage(data, ctx.getProperties(), this.lanes.catchUp, ctx.getRedeliveryCount());
  }

  @EventPattern(TOPICS.retries)
  async onRetry(@Payload() data: unknown, @Ctx() ctx: PulsarContext): Promise<void> {
    await this.fires.handleMessage(data, ctx.getProperties(), this.lanes.retries, ctx.getRedeliveryCount());
  }
}
