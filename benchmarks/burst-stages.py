#!/usr/bin/env python3
"""Where a burst's pods spend their time, from the extender's INFO log (issue 47): submitted ->
allocated (the wake-up decided) -> filter (kube-scheduler asks) -> bound, per pod, p50/p95/max.
  benchmarks/burst-stages.py EXTENDER_LOG NAMESPACE/ [SLURM_ALLOCATE_TIME | SLURMCTLD_LOG]
e.g. the 64-pod burst of `TimeToBind --only our-part --tag T`: NAMESPACE/ is bench-burst64-T/; the
third argument adds each stage's time from Slurm's allocation: one time for all (slurmctld.log's
"sched: Allocate" time, 2026-11-29T06:51:15.981), or slurmctld's log itself, read per job: its
allocation, and the end of its PrologSlurmctld (after which the hook has sent its hint)."""
import os, re, sys, statistics
from datetime import datetime
log, prefix = sys.argv[1], sys.argv[2]
ts = lambda s: datetime.strptime(s[:23], '%Y-%m-%dT%H:%M:%S.%f').timestamp()
ev = {}
for line in open(log, errors='replace'):
    m = re.match(r'(\S+) +\w+ +(\w+) (\w+) pod=(\S+)', line)
    if not m: continue
    t, cls, what, pod = ts(m.group(1)), m.group(2), m.group(3), m.group(4)
    name = pod
    if not name.startswith(prefix): continue
    key = {('Submitter','placeholder_submitted'):'sub', ('StepRunner','placeholder_allocated'):'alloc',
           ('FilterRoutes','filter'):'filter', ('BindService','bind'):'bind'}.get((cls, what))
    if key and key not in ev.setdefault(name, {}):
        ev[name][key] = t
    job = re.search(r' slurmJob=(\d+)', line)
    if job:  # its first placeholder's, from whichever of its lines comes first
        ev.setdefault(name, {}).setdefault('job', job.group(1))
pods = [e for e in ev.values() if all(k in e for k in ('sub','alloc','filter','bind'))]
def st(xs):
    xs = sorted(xs); n = len(xs)
    return f"p50 {1000*xs[n//2]:7.0f}  p95 {1000*xs[min(n-1,int(n*.95))]:7.0f}  max {1000*xs[-1]:7.0f} ms"
print(f"{prefix}: {len(pods)} pods with all four stages (of {len(ev)})")
if not pods: sys.exit()
t0 = min(e['sub'] for e in pods)
print("submitted, from the first:   ", st([e['sub']-t0 for e in pods]))
print("submitted -> allocated:      ", st([e['alloc']-e['sub'] for e in pods]))
print("allocated -> filter:         ", st([e['filter']-e['alloc'] for e in pods]))
print("filter -> bound:             ", st([e['bind']-e['filter'] for e in pods]))
print("allocated -> bound:          ", st([e['bind']-e['alloc'] for e in pods]))
last_sub = max(e['sub'] for e in pods)
early = [e for e in pods if e['alloc'] < last_sub]
print(f"woken before the last submission: {len(early)}; their allocated -> filter:", st([e['filter']-e['alloc'] for e in early]) if early else '-')
if len(sys.argv) > 3 and os.path.isfile(sys.argv[3]):
    allocated, prolog = {}, {}
    for line in open(sys.argv[3], errors='replace'):
        m = re.match(r'\[(\S+)\] sched: Allocate JobId=(\d+) ', line)
        if m: allocated.setdefault(m.group(2), ts(m.group(1)))
        m = re.match(r'\[(\S+)\] prolog_running_decr: Configuration for JobId=(\d+) is complete', line)
        if m: prolog.setdefault(m.group(2), ts(m.group(1)))
    known = [e for e in pods if e.get('job') in allocated]
    hooked = [e for e in known if e['job'] in prolog]
    print(f"per job from slurmctld's log: {len(known)} allocated, {len(hooked)} with their prolog's end")
    if hooked:
        print("Slurm allocated -> prolog done:", st([prolog[e['job']]-allocated[e['job']] for e in hooked]))
        print("prolog done -> allocated here: ", st([e['alloc']-prolog[e['job']] for e in hooked]))
    if known:
        print("Slurm allocated -> here:       ", st([e['alloc']-allocated[e['job']] for e in known]))
        print("Slurm allocated -> bound:      ", st([e['bind']-allocated[e['job']] for e in known]))
elif len(sys.argv) > 3:
    base = ts(sys.argv[3])
    for k in ('alloc','filter','bind'):
        print(f"{k} from {sys.argv[3][11:]}:", st([e[k]-base for e in pods]))
