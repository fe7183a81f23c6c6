// Where the tests find the infrastructure: the same variables the roles read, else the local stack
// (`npm run infra:up`). Tests use their own database, Redis DB and Pulsar tenant so that a running
// `npm run up` stack is left alone.
function defaults() {
  return {
    mysqlUrl: process.env.TIMER_MYSQL_URL || 'mysql://timer:timer@127.0.0.1:3306/timer_test',
    redisUrl: process.env.TIMER_REDIS_URL || 'redis://127.0.0.1:6379/1',
    pulsarUrl: process.env.TIMER_PULSAR_URL || 'http://127.0.0.1:8080',
    pulsarTenant: process.env.TIMER_PULSAR_TENANT || 'timer-test',
  };
}
module.exports = { defaults };
