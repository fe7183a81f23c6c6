import 'reflect-metadata';
import { bootstrapRole } from '@timer/platform';
import { AppModule } from './app.module';

bootstrapRole({ role: 'api', module: AppModule.register }).catch((e: unknown) => {
  process.stderr.write(`timer-api failed to start: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
