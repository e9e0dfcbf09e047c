#!/usr/bin/env python3
# Summarises run_device.sh output (JSON lines and percall lines) per phase, store and build:
#   python3 Benchmarks/Writers/summarize.py RESULTS.jsonl before,after
import json,collections,sys,re
rows=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"lib"')]
libs=sys.argv[2].split(',')
d=collections.defaultdict(list)
for r in rows:
    k=(r['phase'],r['store'],r['lib'],r.get('tap_every_us',0))
    d[k].append(r)
def show(ph, fields, pace=0):
    for st in ['mem','file']:
        for lib in libs:
            rs=d[(ph,st,lib,pace)]
            if not rs: continue
            print(ph+(f'[every {pace}us]' if pace else ''),st,lib, ' | '.join(f+'='+','.join(str(r[f]) for r in rs) for f in fields))
show('tap_beside_batches',['taps','mutate_max_us','mutate_p50_us','mutate_p999_us','commit_max_us','batches_ms'])
show('tap_beside_batches',['taps','mutate_max_us','mutate_p50_us','mutate_p999_us','commit_max_us'],100)
show('get_beside_batches',['get_max_us','get_p50_us','beside_over_alone'])
show('writers',['one_per_s','two_per_s','two_over_one'])
show('commit_path',['batch_tap_p50_us','batch_commit_p50_us','put_tap_p50_us','put_commit_p50_us','get_p50_us'])
pc=collections.defaultdict(list)
for l in open(sys.argv[1]):
    m=re.match(r'(\w+) rep (\d) (\S+): (\w+)\s+median\s+(\d+)',l)
    if m: pc[(m.group(1),m.group(3),m.group(4))].append(m.group(5))
for k in sorted(pc): print('percall',*k,','.join(pc[k]))
