// One Jest run over four projects, chosen by where a test lives and its suffix:
//   unit         apps/*/src, libs/*/src, bench  *.spec.ts  no servers, no tools
//   integration  apps/*/test, libs/*/test *.int-spec.ts  real MariaDB, Redis and Pulsar
//   e2e          e2e/test *.e2e-spec.ts                  the servers and the built roles (npm run build)
//   deploy       deploy/test *.spec.ts                   compose file, dashboard, Helm chart: no servers,
//                                                        but a real Helm (TIMER_HELM_BIN, else built)
//   docs         docs/test *.spec.ts                     links, anchors, every TIMER_* variable documented
// `jest --selectProjects unit` runs one of them. Integration and e2e carry the global setup that
// checks the servers answer (jest/global-setup.js); Jest runs a project's global setup only when a
// test of that project is selected (once for both, as they share the file), so unit and deploy runs
// never wait for servers.
const preset = require('./jest.preset.js');

const serversSetup = '<rootDir>/jest/global-setup.js';
const project = (displayName, roots, testMatch, extra = {}) => ({ ...preset, displayName, roots, testMatch, ...extra });

module.exports = {
  projects: [
    project('unit', ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/bench'], ['<rootDir>/{apps,libs}/*/src/**/*.spec.ts', '<rootDir>/bench/**/*.spec.ts']),
    project('integration', ['<rootDir>/apps', '<rootDir>/libs'], ['<rootDir>/{apps,libs}/*/test/**/*.int-spec.ts'], { globalSetup: serversSetup }),
    project('e2e', ['<rootDir>/e2e'], ['<rootDir>/e2e/test/**/*.e2e-spec.ts'], { globalSetup: serversSetup }),
    project('deploy', ['<rootDir>/deploy'], ['<rootDir>/deploy/test/**/*.spec.ts']),
    project('docs', ['<rootDir>/docs'], ['<rootDir>/docs/test/**/*.spec.ts']),
  ],
};
