import 'reflect-metadata';
import { bootstrapRole, exitOnBootFailure } from '@timer/platform';
import { AppModule } from './app.module';

bootstrapRole({ role: 'api', module: AppModule.register }).catch(exitOnBootFailure('api'));
