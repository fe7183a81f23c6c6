// One Jest run over every project. Integration and e2e tests need MariaDB, Redis and Pulsar:
// the global setup checks they answer (see jest/global-setup.ts) and fails with what is missing.
module.exports = {
  projects: ['<rootDir>/apps/*/jest.config.js', '<rootDir>/libs/*/jest.config.js', '<rootDir>/e2e/jest.config.js', '<rootDir>/deploy/jest.config.js'],
  globalSetup: '<rootDir>/jest/global-setup.js',
};
