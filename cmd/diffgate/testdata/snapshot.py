import hashlib, json, os, sys

root, out = sys.argv[1], sys.argv[2]

def snapshot(root):
    items = []
    for dirpath, _, names in os.walk(root):
        for name in names:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            h = hashlib.sha256()
            with open(p, 'rb') as f:
                for chunk in iter(lambda: f.read(65536), b''):
                    h.update(chunk)
            st = os.stat(p)
            items.append((rel, st.st_size, h.hexdigest()))
    items.sort()
    return items

json.dump(snapshot(root), open(out, 'w'), indent=2)
