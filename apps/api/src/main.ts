import 'reflect-metadata';
import { bootstrapRole, exitOnBootFailure } from '@timer/platform';
import { AppModule } from './app.module';
import { ApiValidationPipe } from './common/validation.pipe';
import { API_VARIABLES } from './config/api.env';

bootstrapRole({ role: 'api', module: (config) => AppModule.register(config), extraVariables: API_VARIABLES, validationPipe: new ApiValidationPipe() }).catch(exitOnBootFailure('api'));
