#!/usr/bin/env python3
"""Where a JFR profile's execution samples were: by the top frame's type (interpreted, JIT compiled,
inlined), the threads sampled, and the methods and packages of the interpreted samples (issue 47:
how much of a fresh extender's first burst runs before the JIT has compiled it).
  benchmarks/jfr-samples.py FILE.jfr      (TimeToBind --only warm ... --jfr FILE.jfr records one)"""
import collections, json, os, subprocess, sys
JFR = os.path.join(os.environ["JAVA_HOME"], "bin", "jfr") if os.environ.get("JAVA_HOME") else "jfr"
out = subprocess.run([JFR, "print", "--json", "--events", "jdk.ExecutionSample", sys.argv[1]], capture_output=True, text=True, check=True).stdout
ev = json.loads(out)["recording"]["events"]
types = collections.Counter(); meth = collections.Counter(); pkg = collections.Counter(); anyframe = collections.Counter()
thread = collections.Counter()
for e in ev:
    st = e["values"]["stackTrace"]
    if not st: continue
    fr = st["frames"]
    top = fr[0]
    t = top["type"]; types[t] += 1
    m = top["method"]; name = m["type"]["name"] + "." + m["name"]
    thread[e["values"]["sampledThread"]["javaName"].rstrip("0123456789-")] += 1
    if t == "Interpreted":
        meth[name] += 1
        pkg[".".join(m["type"]["name"].split(".")[:4])] += 1
    seen = set()
    for f in fr:
        p = ".".join(f["method"]["type"]["name"].split(".")[:4])
        if p.startswith("io.kse") and p not in seen:
            seen.add(p); anyframe[p] += 1
n = sum(types.values())
print("samples", n, {k: f"{v} ({100*v/n:.0f}%)" for k, v in types.most_common()})
print("threads:", thread.most_common(12))
for title, counts, k in (("interpreted, top methods:", meth, 25), ("interpreted, by package:", pkg, 15),
                         ("samples with our package anywhere on the stack:", anyframe, 15)):
    print(title)
    for what, v in counts.most_common(k):
        print(f"  {v:5d} {what}")
