import { withoutTicket } from './admit-console-request';

describe('the path the agent sees', () => {
  test.each([
    ['/global/health', '/global/health'],
    ['/global/health?ticket=abc', '/global/health'],
    ['/terminal?cols=100&ticket=abc&rows=30', '/terminal?cols=100&rows=30'],
    ['/chat/messages?after=3&%74icket=abc&note=a%20b+c', '/chat/messages?after=3&note=a%20b+c'],
    ['/chat/stream?ticket=a&ticket=b', '/chat/stream'],
    ['/x?tickets=1&ticket', '/x?tickets=1'],
  ])('when %s is forwarded, then the agent sees %s', (rest, expected) => {
    expect(withoutTicket(rest)).toBe(expected);
  });
});
