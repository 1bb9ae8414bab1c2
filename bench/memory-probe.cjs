// Preloaded by bench/service-memory.mjs into every service it starts (`node --require …/memory-probe.cjs`):
// on SIGUSR2 the process writes its own memory figures (process.memoryUsage() and V8's heap spaces) to
// `$SVC_MEMORY_PROBE_DIR/memory-<pid>.json`, and a heap snapshot next to it when the bench asked for one by
// writing `snapshot` to `$SVC_MEMORY_PROBE_DIR/request-<pid>`. Nothing else: no timer, no listener besides
// the signal, so the service runs as it does without it. Not part of any service.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const v8 = require('node:v8');

const dir = process.env.SVC_MEMORY_PROBE_DIR;
if (dir) {
  process.on('SIGUSR2', () => {
    const request = path.join(dir, `request-${process.pid}`);
    let what = 'memory';
    try {
      what = fs.readFileSync(request, 'utf8').trim();
      fs.rmSync(request, { force: true });
    } catch {
      // No request file: memory figures only.
    }
    const out = {
      memory: process.memoryUsage(),
      spaces: v8.getHeapSpaceStatistics().map((s) => ({
        name: s.space_name,
        used: s.space_used_size,
        size: s.space_size,
      })),
    };
    if (what === 'snapshot') {
      out.snapshot = v8.writeHeapSnapshot(
        path.join(dir, `service-${process.pid}-${Date.now()}.heapsnapshot`),
      );
    }
    const file = path.join(dir, `memory-${process.pid}.json`);
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(out));
    fs.renameSync(`${file}.tmp`, file);
  });
}
