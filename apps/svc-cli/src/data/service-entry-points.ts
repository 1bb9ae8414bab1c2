import path from 'node:path';

/**
 * The built entry points of the relay and the console router that ship with the CLI. Their packages export
 * only their main module, so the entry point is found next to it (`dist/main.js`).
 */
export function serviceEntryPoints(): { relayMain: string; routerMain: string; svcEntry: string } {
  return {
    relayMain: path.join(path.dirname(require.resolve('@svc/relay')), 'main.js'),
    routerMain: path.join(path.dirname(require.resolve('@svc/console-router')), 'main.js'),
    // svc itself (`bin/run.js` of this package), which the relay runs for a spawn (`svc start`).
    svcEntry: path.resolve(__dirname, '..', '..', 'bin', 'run.js'),
  };
}
