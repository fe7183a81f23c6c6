import { INestApplication } from '@nestjs/common';
import { ApplicationConfig, HttpAdapterHost, ModulesContainer } from '@nestjs/core';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

export const DOCS_PATH = 'api/docs';

function builder() {
  return new DocumentBuilder()
    .setTitle('timer service API')
    .setDescription(
      'Register cron or one-shot timers with an HTTP callback. Every answer is the envelope `{code, msg, ...}`: ' +
        '`code` 0 on success, otherwise HTTP status x 100 + detail with a message naming the problem and a `requestId`. ' +
        'Authenticate with `Authorization: Bearer <token>`: the admin token (TIMER_ADMIN_TOKEN) acts on every app, an ' +
        'app token on its own app only.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'admin token or app token' })
    .build();
}

/**
 * `SwaggerModule` wants the `INestApplication`, which a role module never sees (`bootstrapRole`
 * creates it). What it reads from it: the HTTP adapter, the module container and the application
 * config (global prefix and versioning, neither of which the api uses). This gives it exactly that.
 */
function appView(adapter: AbstractHttpAdapter, modules: ModulesContainer): INestApplication {
  const view = {
    getHttpAdapter: () => adapter,
    useStaticAssets: (path: string, options?: object) => adapter.useStaticAssets(path, options),
    container: { getModules: () => modules, isGlobalModule: () => false },
    config: new ApplicationConfig(),
  };
  return view as unknown as INestApplication;
}

/**
 * Serves the OpenAPI document at `/api/docs` (UI) and `/api/docs-json`, built on first request from
 * the controllers' decorators, so it lists exactly the routes the process serves.
 */
export function serveOpenApi(host: HttpAdapterHost, modules: ModulesContainer): void {
  const app = appView(host.httpAdapter, modules);
  let document: OpenAPIObject | undefined;
  const factory = () => (document ??= SwaggerModule.createDocument(app, builder()));
  SwaggerModule.setup(DOCS_PATH, app, factory, { jsonDocumentUrl: `${DOCS_PATH}-json`, yamlDocumentUrl: `${DOCS_PATH}-yaml` });
}
