// Global setup of the integration and e2e projects (jest.config.js): Jest runs it once, before the
// first test, when the run includes any of theirs. They talk to real MariaDB, Redis and Pulsar; this
// checks each answers (TIMER_MYSQL_URL, TIMER_REDIS_URL, TIMER_PULSAR_URL, else the local defaults
// `npm run infra:up` starts) and stops the run with the one that does not.
const net = require('net');
const { defaults } = require('../libs/testing/src/test-env');

function probe(name, url) {
  const u = new URL(url);
  const port = Number(u.port) || { 'mysql:': 3306, 'redis:': 6379, 'http:': 80, 'https:': 443 }[u.protocol];
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: u.hostname, port, timeout: 3000 });
    socket.once('connect', () => { socket.destroy(); resolve(); });
    const fail = (e) => { socket.destroy(); reject(new Error(`${name} is not reachable at ${u.host} (${e && e.message ? e.message : 'timeout'}): run \`npm run infra:up\` or set the variable for it`)); };
    socket.once('error', fail);
    socket.once('timeout', fail);
  });
}

module.exports = async function globalSetup() {
  const env = defaults();
  await Promise.all([
    probe('MySQL (TIMER_MYSQL_URL)', env.mysqlUrl),
    probe('Redis (TIMER_REDIS_URL)', env.redisUrl),
    probe('Pulsar (TIMER_PULSAR_URL)', env.pulsarUrl),
  ]);
};
