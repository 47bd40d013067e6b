# Before/after table of deltanet_bench runs (Google Benchmark JSON, --benchmark_repetitions=N):
# the min and median over all repetitions of each case, per kernel path.
# usage: before_after_table.py before1.json[,before2.json] after1.json[,after2.json]
import json, sys, statistics, collections
def load(files):
    runs = collections.defaultdict(list)
    for f in files:
        for b in json.load(open(f))['benchmarks']:
            if b.get('run_type') == 'iteration':
                runs[b['run_name']].append(b)
    return runs
before, after = load(sys.argv[1].split(',')), load(sys.argv[2].split(','))
def fig(runs, name, key):
    vals = [r[key] for r in runs[name]]
    return min(vals), statistics.median(vals)
cases = [('prompt/one_head', 'T:256', ['cpu_time']), ('prompt/one_head', 'T:512', ['cpu_time']),
         ('prompt/one_head', 'T:4096', ['cpu_time']),
         ('prompt/32_heads', 'T:256/process_time/real_time', ['real_time', 'cpu_time']),
         ('prompt/32_heads', 'T:512/process_time/real_time', ['real_time', 'cpu_time']),
         ('prompt/32_heads', 'T:4096/process_time/real_time', ['real_time', 'cpu_time']),
         ('decode/one_head', 'T:1', ['cpu_time']),
         ('decode/32_heads', 'T:1/process_time/real_time', ['real_time', 'cpu_time'])]
print('| case | timed (min / median) | before: scalar | after: AVX2 | after: AVX-512 | AVX-512 speed-up (min) | part ms/token, before -> AVX-512 (min) |')
print('| --- | --- | ---: | ---: | ---: | ---: | ---: |')
for group, arg, keys in cases:
    for key in keys:
        names = [f'{group}/{p}/{arg}' for p in ('portable', 'avx2', 'avx512')]
        unit = before[names[0]][0]['time_unit']
        b, a2, a5 = fig(before, names[0], key), fig(after, names[1], key), fig(after, names[2], key)
        f = lambda x: f'{x[0]:.3g} / {x[1]:.3g}'
        what = {'cpu_time': 'CPU' if 'one_head' in group else 'process CPU', 'real_time': 'wall'}[key]
        part = ''
        if key == keys[0]:
            pb, p5 = fig(before, names[0], 'part_per_token'), fig(after, names[2], 'part_per_token')
            part = f'{pb[0]*1e3:.2f} -> {p5[0]*1e3:.2f}'
        print(f"| {group} {arg.split('/')[0]} | {what} {unit} | {f(b)} | {f(a2)} | {f(a5)} | {b[0]/a5[0]:.1f}x | {part} |")
