#!/usr/bin/env python3
"""Each bucket's all-reduce while backward runs, against the same bytes alone, from the timelines
of both ranks (`ddp_steps.py --profile --profile-only`: <tag>.rank<r>.timeline.json.gz).

An NCCL kernel of one rank also waits for its peer to arrive, so its own duration over-states
the slowdown; here a bucket's time runs from the later rank's kernel start to the later end. A
bucket counts as beside compute when both ranks' compute kernels cover over 80 % of that span.
Prints per model the medians (2 GPUs).

  python3 calibrate/ddp/beside_alone.py calibrate/data/h200x2-r5-timelines
"""
import sys
import json,gzip,glob,statistics,bisect
def load(f): return json.load(gzip.open(f,'rt'))
for f0 in sorted(glob.glob(sys.argv[1] + '/*.rank0.timeline.json.gz')):
    d0=load(f0); d1=load(f0.replace('rank0','rank1'))
    nb=len(d0['bucket_bytes']); alone=[a['us'] for a in d0['allreduce_alone']]
    ar0=[k for k in d0['nccl_kernels'] if 'AllReduce' in k['name']]
    ar1=[k for k in d1['nccl_kernels'] if 'AllReduce' in k['name']]
    comp0=sorted((c[0],c[0]+c[1]) for c in d0['compute_kernel_spans'])
    comp1=sorted((c[0],c[0]+c[1]) for c in d1['compute_kernel_spans'])
    def cov(comp,s,e):
        st=[c[0] for c in comp]; j=bisect.bisect_left(st,s-2e5); t=0
        for c0,c1 in comp[j:]:
            if c0>e: break
            t+=max(0,min(e,c1)-max(s,c0))
        return t/max(e-s,1)
    n=min(len(ar0),len(ar1))
    rat=[];rat_raw=[];waits=[];rat_alone=[]
    for i in range(n):
        a,b=ar0[i],ar1[i]
        start=max(a['ts'],b['ts']); end=max(a['ts']+a['dur'],b['ts']+b['dur'])
        eff=end-start; idx=i%nb
        if alone[idx]<50: continue
        waits.append(abs(a['ts']-b['ts']))
        c=min(cov(comp0,start,end),cov(comp1,start,end))
        (rat if c>0.8 else rat_alone).append(eff/alone[idx])
        rat_raw.append(a['dur']/alone[idx])
    q=lambda x,p: sorted(x)[int(p*(len(x)-1))] if x else float('nan')
    print(f0.split('/')[-1][:14].ljust(14),'buckets',nb,'alone med %.0f us'%statistics.median(alone),
          '| rank0 dur/alone med %.2f'%statistics.median(rat_raw),
          '| both-started eff/alone beside compute med %.2f p10 %.2f p90 %.2f (n=%d)'%(statistics.median(rat) if rat else float('nan'),q(rat,.1),q(rat,.9),len(rat)),
          '| not beside: med %.2f (n=%d)'%(statistics.median(rat_alone) if rat_alone else float('nan'),len(rat_alone)),
          '| start skew med %.0f us'%statistics.median(waits))
