import { freePort } from './process';

describe('freePort', () => {
  test('when ports are asked for one after another, then none is given twice', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 200; i += 1) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    expect(ports.every((port) => port > 0 && port < 65_536)).toBe(true);
  });
});
