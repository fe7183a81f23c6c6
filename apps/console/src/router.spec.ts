import { hrefOf, parseRoute, Route } from './router';

describe('console routes', () => {
  it.each<Route>([{ page: 'timers' }, { page: 'new' }, { page: 'overview' }, { page: 'dead-letters' }, { page: 'admin' }, { page: 'timer', id: '42' }])(
    'reads back what it writes: %o',
    (route) => {
      expect(parseRoute(hrefOf(route))).toEqual(route);
      expect(parseRoute(`${hrefOf(route)}/`)).toEqual(route);
    },
  );

  it('sends an unknown path to the timers list', () => {
    expect(parseRoute('/console/dead-letters/x')).toEqual({ page: 'timers' });
    expect(parseRoute('/console/admins')).toEqual({ page: 'timers' });
  });
});
