# syntax=docker/dockerfile:1
# One image for the five roles; the first argument picks the role (api, migrator, scheduler,
# trigger, executor) or `migrate` (apply the schema and exit). Every role listens on 8080 inside the
# container (TIMER_HTTP_PORT), so probes and services look the same for all of them. `ops <command>`
# runs the operators' command (README, "Operations").

# Node 24 LTS: supported until 2028-04-30 (Node 20 reached its end of life on 2026-04-30). Both stages
# use it: native modules built by `npm ci` must match the runtime's ABI.
ARG NODE_MAJOR=24

FROM node:${NODE_MAJOR}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.base.json tsconfig.build.json ./
COPY apps apps
COPY libs libs
COPY bench bench
COPY scripts/copy-lua.js scripts/copy-lua.js
RUN npx tsc -p tsconfig.build.json \
 && node scripts/copy-lua.js \
 && npx vite build --config apps/console/vite.config.mts \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf dist/bench

FROM node:${NODE_MAJOR}-bookworm-slim
# A 64 MB young generation: under a burst of callbacks the executor's scavenges take half the time
# (README, "Configuration"); override NODE_OPTIONS to change it.
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=64 \
    TIMER_HTTP_HOST=0.0.0.0 \
    TIMER_HTTP_PORT=8080 \
    TIMER_LOG_FORMAT=json
WORKDIR /app
COPY --from=build --chown=root:root /app/node_modules node_modules
COPY --from=build --chown=root:root /app/dist dist
COPY --chown=root:root package.json tsconfig.base.json ./
COPY --chown=root:root scripts/register-paths.js scripts/register-paths.js
COPY --chown=root:root deploy/docker/entrypoint.sh /usr/local/bin/timer
COPY --chown=root:root deploy/docker/healthcheck.js /usr/local/bin/timer-healthcheck.js
# The image's own `node` user (uid 1000); nothing in /app is writable by it.
USER 1000:1000
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 CMD ["node", "/usr/local/bin/timer-healthcheck.js"]
ENTRYPOINT ["/usr/local/bin/timer"]
CMD ["api"]
