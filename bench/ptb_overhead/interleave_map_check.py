# Host-side check of the interleaved order's map (runtime/include/ptb/device.cuh: detail::task_of and the strided
# walk of run_tasks): random 3-D grids, worker counts W, column lengths c and run lengths; every task exactly once.
# Usage: python3 bench/ptb_overhead/interleave_map_check.py
import random
def check(gx,gy,gz,W,c):
    n=gx*gy*gz; G=c*W; end=n//G*G
    if end==0: return
    sx=W%gx; sy=(W//gx)%gy; sz=W//(gx*gy)
    def task_of(l):
        if l>=end: return l
        g=l//G; o=l-g*G; w=o//c; r=o-w*c
        return g*G+r*W+w
    seen=set()
    l=0
    while l<n:
        # runs: cut at column boundaries within end; random run lengths
        go=random.randint(1,40)
        if l<end: go=min(go,c-l%c)
        go=min(go,n-l)
        p=task_of(l); x=p%gx; y=(p//gx)%gy; z=p//(gx*gy)
        st=l<end
        for j in range(go):
            pid=x+gx*(y+gy*z)
            assert pid==task_of(l+j),(gx,gy,gz,W,c,l,j)
            assert pid not in seen; seen.add(pid)
            if st:
                x+=sx;y+=sy;z+=sz
                if x>=gx: x-=gx;y+=1
                if y>=gy: y-=gy;z+=1
            else:
                x+=1
                if x==gx:
                    x=0;y+=1
                    if y==gy: y=0;z+=1
        l+=go
    assert len(seen)==n
for t in range(3000):
    gx=random.choice([1,2,3,7,16,64,1000,5000]); gy=random.choice([1,2,5,16,64]); gz=random.choice([1,2,3,8,33])
    W=random.randint(2,3000); c=random.randint(1,20)
    if gx*gy*gz>300000: continue
    check(gx,gy,gz,W,c)
print("ok")
