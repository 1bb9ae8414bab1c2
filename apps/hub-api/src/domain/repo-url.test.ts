import { repoUrlProblem } from './repo-url';

describe('repoUrlProblem', () => {
  test.each([
    'https://github.com/example/repo.git',
    'https://git.example.test:8443/group/sub/repo',
    'ssh://git@github.com/example/repo.git',
    'ssh://git@git.example.test:2222/team/repo.git',
    'git@github.com:example/repo.git',
    'github.com:example/repo.git',
  ])('when the url is %s, then it is accepted', (url) => {
    expect(repoUrlProblem(url)).toBeNull();
  });

  test.each([
    ['http://github.com/example/repo.git', /https/],
    ['https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/example/repo.git', /user name or token/],
    ['https://user:pass@github.com/example/repo.git', /password or token/],
    ['ssh://git:pass@github.com/example/repo.git', /password or token/],
    ['https://github.com', /repository path/],
    ['https://github.com/example/repo.git#main', /query or fragment/],
    ['git@github.com:', /https|SSH/],
    ['git@github.com:/abs/path', /https|SSH/],
    ['git@-bad-.com:example/repo.git', /invalid host/],
    ['C:/repos/repo.git', /https|SSH/],
    ['https://github.com/example/re po.git', /whitespace/],
    ['https://github.com/example/repo.git\u0000', /control characters/],
  ])('when the url is %s, then it is refused', (url, reason) => {
    expect(repoUrlProblem(url)).toMatch(reason);
  });

  test('when a url carries a token, then the reason does not repeat it', () => {
    const token = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
    expect(repoUrlProblem(`https://${token}@github.com/x/y.git`)).not.toContain(token);
  });
});
