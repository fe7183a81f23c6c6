module.exports = { ...require('../../jest.preset.js'), displayName: 'pulsar-transport' };
