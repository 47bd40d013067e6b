# Before/after table of deltanet_bench's conv/* and gated_norm/* cases (Google Benchmark JSON,
# --benchmark_repetitions=N): min and median over all repetitions, per kernel path. The
# portable path is the code before the vector kernels, so one binary's runs give both sides.
# usage: conv_table.py run1.json[,run2.json]
import json, sys, statistics, collections
runs = collections.defaultdict(list)
for f in sys.argv[1].split(','):
    for b in json.load(open(f))['benchmarks']:
        if b.get('run_type') == 'iteration':
            runs[b['run_name']].append(b)
def fig(name, key):
    vals = [r[key] for r in runs[name]]
    return min(vals), statistics.median(vals)
cases = [('conv/one_thread', a, ['cpu_time']) for a in ('T:1', 'T:256', 'T:512')]
cases += [('conv/pool', f'{a}/process_time/real_time', ['real_time', 'cpu_time'])
          for a in ('T:1', 'T:256', 'T:512')]
cases += [('gated_norm/one_thread', a, ['cpu_time']) for a in ('T:1', 'T:256')]
print('| case | timed (min / median) | before: portable | after: AVX2 | after: AVX-512 | AVX-512 speed-up (min) | part ms/token, before -> AVX-512 (min) |')
print('| --- | --- | ---: | ---: | ---: | ---: | ---: |')
for group, arg, keys in cases:
    for key in keys:
        names = [f'{group}/{p}/{arg}' for p in ('portable', 'avx2', 'avx512')]
        unit = runs[names[0]][0]['time_unit']
        b, a2, a5 = fig(names[0], key), fig(names[1], key), fig(names[2], key)
        f = lambda x: f'{x[0]:.3g} / {x[1]:.3g}'
        what = {'cpu_time': 'CPU' if 'one_thread' in group else 'process CPU', 'real_time': 'wall'}[key]
        part = ''
        if key == keys[0]:
            pb, p5 = fig(names[0], 'part_per_token'), fig(names[2], 'part_per_token')
            part = f'{pb[0]*1e3:.3f} -> {p5[0]*1e3:.3f}'
        print(f"| {group} {arg.split('/')[0]} | {what} {unit} | {f(b)} | {f(a2)} | {f(a5)} | {b[0]/a5[0]:.1f}x | {part} |")
