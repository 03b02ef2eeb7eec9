import json, sys

before = {p: (s, h) for p, s, h in json.load(open(sys.argv[1]))}
after = {p: (s, h) for p, s, h in json.load(open(sys.argv[2]))}
allow = {a for a in sys.argv[3].split(',') if a}

def ok(p):
    return any(p == a or p.startswith(a.rstrip('/') + '/') for a in allow)

failed = False
for p in sorted(set(before) | set(after)):
    if ok(p):
        continue
    if p not in before:
        print('ADDED', p)
        failed = True
    elif p not in after:
        print('REMOVED', p)
        failed = True
    elif before[p] != after[p]:
        print('CHANGED', p)
        failed = True
sys.exit(1 if failed else 0)
