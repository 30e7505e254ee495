# Sums nvcc.log (one line per nvcc run: user s, sys s, wall s, rc, cwd :: arguments) by the ctest test that
# ran it, recognised from the paths in the line. python3 by-test.py nvcc.log
import collections, sys
tests = collections.defaultdict(lambda: [0, 0.0])
for line in open(sys.argv[1]):
    head, _, args = line.rstrip('\n').partition(' :: ')
    user, sys_, _wall, _rc, cwd = head.split()[:5]
    s = cwd + ' ' + args
    name = ('lit' if '/lit' in s else 'gpu-corpus-compiles' if 'gpu-compile-check' in s
            else 'fusion-semantics-compiles' if 'fusion-semantics' in s else 'fusion-compiles' if 'fusion-ci' in s
            else 'bench-colocate-compiles' if 'bench-colocate-ci' in s else 'bench-unit-probe-compiles' if 'unit-probe' in s
            else 'runtime-macros' if '.log.ii' in s or 'check_macros' in s
            else 'installed-package' if cwd.startswith('/tmp/tmp.') or '/prefix/' in s
            else 'runtime-builds, runtime-headers')
    tests[name][0] += 1
    tests[name][1] += float(user) + float(sys_)
total = sum(v[1] for v in tests.values())
print(f"{'test':34s} {'nvcc runs':>9s} {'CPU s':>8s}")
for name, (runs, cpu) in sorted(tests.items(), key=lambda x: -x[1][1]):
    print(f"{name:34s} {runs:9d} {cpu:8.1f}")
print(f"{'all':34s} {sum(v[0] for v in tests.values()):9d} {total:8.1f}")
