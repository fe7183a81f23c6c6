module.exports = { ...require('../jest.preset.js'), displayName: 'deploy', testMatch: ['<rootDir>/test/**/*.spec.ts'] };
