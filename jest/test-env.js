// Where the tests find the infrastructure: the same variables the roles read, else the local stack.
function defaults() {
  return {
    mysqlUrl: process.env.TIMER_MYSQL_URL || 'mysql://timer:timer@127.0.0.1:3306/timer',
    redisUrl: process.env.TIMER_REDIS_URL || 'redis://127.0.0.1:6379/0',
    pulsarUrl: process.env.TIMER_PULSAR_URL || 'http://127.0.0.1:8080',
  };
}
module.exports = { defaults };
