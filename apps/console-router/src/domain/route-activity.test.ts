import { RouteActivity } from './route-activity';

describe('route activity', () => {
  test('when touched again within the throttle window, then the first time is kept; after it, the new one', () => {
    let now = 10_000;
    const activity = new RouteActivity(5_000, () => now);
    expect(activity.lastActivity('a1')).toBeUndefined();
    activity.touch('a1');
    now += 4_999;
    activity.touch('a1');
    expect(activity.lastActivity('a1')?.getTime()).toBe(10_000);
    now += 1;
    activity.touch('a1');
    expect(activity.lastActivity('a1')?.getTime()).toBe(15_000);
  });

  test('when sockets open and close (a close counted twice included), then the count follows', () => {
    const activity = new RouteActivity();
    const first = activity.opened('a1');
    const second = activity.opened('a1');
    expect(activity.openSockets('a1')).toBe(2);
    first();
    first();
    expect(activity.openSockets('a1')).toBe(1);
    second();
    expect(activity.openSockets('a1')).toBe(0);
  });
});
