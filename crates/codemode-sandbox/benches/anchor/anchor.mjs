// Anchor for `cargo bench -p codemode-sandbox`: the same operations on the npm package
// `quickjs-wasi` in Node. Prints one line per operation: `name<TAB>median_us<TAB>min_us[<TAB>bytes]`.
// Run by the Rust bench (which installs the package into its target dir); or by hand:
//   npm install quickjs-wasi@3.7.0 && node anchor.mjs [iterations]
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { QuickJS } from 'quickjs-wasi';

const require = createRequire(import.meta.url);
const iters = Number(process.argv[2] ?? 200);
const wasm = new WebAssembly.Module(readFileSync(require.resolve('quickjs-wasi/quickjs.wasm')));

function stats(name, samples, extra) {
  samples.sort((a, b) => a - b);
  const med = samples[samples.length >> 1];
  const line = [name, med.toFixed(2), samples[0].toFixed(2)];
  if (extra !== undefined) line.push(String(extra));
  console.log(line.join('\t'));
}

async function time(n, f) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await f();
    out.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  return out;
}

// VM start + eval `1+1` + teardown.
stats('start_eval_teardown', await time(iters, async () => {
  const vm = await QuickJS.create({ wasm });
  const r = vm.evalCode('1+1');
  if (r.toNumber() !== 2) throw new Error('bad');
  r.dispose();
  vm.dispose();
}));

// Warm eval.
{
  const vm = await QuickJS.create({ wasm });
  stats('warm_eval', await time(iters * 5, () => {
    const r = vm.evalCode('1+1');
    r.dispose();
  }));
  vm.dispose();
}

// Warm eval of a typical 35-line cell (the stripped form of a model's cell: a class, an async
// helper with a loop, destructuring, spreads, arrow functions), defined but not called: its parse
// and compile. Wrapped as codemode's guest wraps a cell (`CELL_PREFIX` / `CELL_SUFFIX` of
// codemode-sandbox, which the sandbox bench passes in), so both engines parse the same text; the
// row is left out when they are not given.
const { CODEMODE_CELL_PREFIX: cellPrefix, CODEMODE_CELL_SUFFIX: cellSuffix } = process.env;
if (cellPrefix !== undefined && cellSuffix !== undefined) {
  const cell = readFileSync(new URL('./typical_cell.js', import.meta.url), 'utf8');
  const script = cellPrefix + cell + cellSuffix;
  const vm = await QuickJS.create({ wasm });
  stats('warm_eval_typical_cell', await time(iters * 5, () => {
    vm.evalCode(script).dispose();
    vm.executePendingJobs();
  }));
  vm.dispose();
}

// A VM suspended on a host call (a pending deferred promise), as in a Code Mode run.
let deferred;
async function suspended() {
  const vm = await QuickJS.create({ wasm });
  const fn = vm.newFunction('hostCall', () => {
    deferred = vm.newPromise();
    return deferred.handle;
  });
  vm.setProp(vm.global, 'hostCall', fn);
  fn.dispose();
  vm.evalCode('globalThis.result = null; (async () => { const r = await hostCall(); globalThis.result = r * 10; })()').dispose();
  vm.executePendingJobs();
  return vm;
}
{
  const vm = await suspended();
  let snap;
  const samples = await time(iters, () => { snap = QuickJS.serializeSnapshot(vm.snapshot()); });
  stats('snapshot', samples, snap.length);
  vm.dispose();
  const stored = QuickJS.deserializeSnapshot(snap);
  stats('restore', await time(iters, async () => {
    const r = await QuickJS.restore(stored, { wasm });
    r.dispose();
  }));
}

// Bridge round trip: settle the pending host promise, run jobs, the guest starts the next call.
{
  const vm = await QuickJS.create({ wasm });
  let d;
  const fn = vm.newFunction('hostCall', () => { d = vm.newPromise(); return d.handle; });
  vm.setProp(vm.global, 'hostCall', fn);
  fn.dispose();
  vm.evalCode('(async () => { for (;;) await hostCall(); })()').dispose();
  vm.executePendingJobs();
  stats('bridge_round_trip', await time(iters * 5, () => {
    const cur = d;
    const v = vm.newNumber(1);
    cur.resolve(v);
    v.dispose();
    vm.executePendingJobs();
  }));
  vm.dispose();
}
