/**
 * One jest run over every app and package, so the whole suite prints a single summary.
 * TypeScript is compiled by swc; workspace packages resolve to their sources through
 * the "svc-source" export condition, so tests never need a prior build.
 */
const projects = ['apps', 'packages'].flatMap((group) =>
  require('node:fs')
    .readdirSync(`${__dirname}/${group}`, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `${group}/${entry.name}`),
);

/** @type {import('jest').Config} */
module.exports = {
  maxWorkers: process.env.JEST_MAX_WORKERS ?? 2,
  // Applies to every project (a per-project testTimeout is ignored by jest).
  testTimeout: 30_000,
  projects: projects.map((dir) => ({
    displayName: dir,
    rootDir: `${__dirname}/${dir}`,
    testEnvironment: 'node',
    // Integration tests talk to real Postgres, Redis and child processes on a shared 2-core machine.
    testTimeout: 30_000,
    testEnvironmentOptions: { customExportConditions: ['svc-source', 'node', 'require', 'default'] },
    testMatch: ['<rootDir>/src/**/*.test.ts', '<rootDir>/test/**/*.test.ts'],
    transform: {
      '^.+\\.(t|j)s$': [
        '@swc/jest',
        {
          jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
          module: { type: 'commonjs' },
        },
      ],
    },
    moduleFileExtensions: ['ts', 'js', 'json', 'cjs', 'mjs'],
    // Generated code (Prisma) imports siblings as `./x.js`; in tests the sibling is `./x.ts`.
    moduleNameMapper: {
      '^(\\.{1,2}/.*)\\.js$': '$1',
      // The control web app's aliases of generated contract sources (its vite.config.mts has the same).
      '^@svc/contracts/documents$': `${__dirname}/packages/contracts/src/generated/documents.ts`,
      '^@svc/contracts/agent-console$': `${__dirname}/packages/contracts/src/generated/agentConsole.ts`,
    },
  })),
};
