#!/usr/bin/env python3
# report_check.py DIR INPUT... -- checks a report written by 'paraplan report --from INPUT ...
# --out DIR' against its inputs:
#   * report.html is well-formed (a strict XML parser reads it) and no id is used twice;
#   * every <img> is a non-empty embedded SVG/PNG or a non-empty file beside the page, and every
#     link into the report directory names a non-empty file;
#   * every number shown (class "n") reads back as its data-v times data-k to the precision it is
#     shown with, and a number with data-src="N:/pointer" equals input N's value at that pointer;
#   * every JSON input is quoted at least once, and the key figures of each are shown;
#   * report.md's images and links name non-empty files; manifest.txt lists every file with its
#     size; each chart's data file has one block per "# series:" header, none empty.
# Prints what it checked; exits 1 with the first failures.
import base64, json, os, re, sys
import xml.etree.ElementTree as ET

out, inputs = sys.argv[1], sys.argv[2:]
fails = []


def fail(msg):
    fails.append(msg)


docs = {}
for i, p in enumerate(inputs, 1):
    with open(p) as f:
        docs[i] = json.load(f)


def pointer(doc, ptr):
    x = doc
    for tok in ptr.split('/')[1:]:
        tok = tok.replace('~1', '/').replace('~0', '~')
        x = x[int(tok)] if isinstance(x, list) else x[tok]
    return x


# ---- HTML --------------------------------------------------------------------------------------
html_path = os.path.join(out, 'report.html')
try:
    root = ET.parse(html_path).getroot()
except ET.ParseError as e:
    print('report.html is not well-formed: %s' % e)
    sys.exit(1)
ns = ''
if root.tag.startswith('{'):
    ns = root.tag[:root.tag.index('}') + 1]

ids = [el.get('id') for el in root.iter() if el.get('id')]
dup = sorted(set(i for i in ids if ids.count(i) > 1))
if dup:
    fail('ids used more than once: %s' % dup[:5])
imgs = 0
for img in root.iter(ns + 'img'):
    imgs += 1
    src = img.get('src', '')
    if src.startswith('data:'):
        head, _, data = src.partition(',')
        raw = base64.b64decode(data)
        if not raw:
            fail('empty embedded image')
        elif 'svg' in head and b'<svg' not in raw[:400]:
            fail('embedded SVG is not SVG')
        elif 'png' in head and not raw.startswith(b'\x89PNG'):
            fail('embedded PNG is not PNG')
    else:
        p = os.path.join(out, src)
        if not os.path.isfile(p) or os.path.getsize(p) == 0:
            fail('image %s missing or empty' % src)
links = 0
for a in root.iter(ns + 'a'):
    href = a.get('href', '')
    if href.startswith('#') or '://' in href:
        continue
    links += 1
    p = os.path.join(out, href)
    if not os.path.isfile(p) or os.path.getsize(p) == 0:
        fail('link %s names no file' % href)

num_re = re.compile(r'^-?(?:[A-Z]{3} |\$)?(-?[0-9][0-9,]*(?:\.([0-9]+))?)\s*([kMBT]?)')
mult = {'': 1.0, 'k': 1e3, 'M': 1e6, 'B': 1e9, 'T': 1e12}
shown = sourced = 0
quoted = set()
for el in root.iter():
    if 'n' not in (el.get('class') or '').split():
        continue
    shown += 1
    text = ''.join(el.itertext()).strip()
    v, k = float(el.get('data-v')), float(el.get('data-k'))
    m = num_re.match(text)
    if m is None:
        fail('%r: not a number' % text)
        continue
    neg = text.startswith('-')
    x = float(m.group(1).replace(',', '')) * mult[m.group(3)] * (-1 if neg and not m.group(1).startswith('-') else 1)
    decimals = len(m.group(2) or '')
    tol = 0.5 * 10 ** -decimals * mult[m.group(3)] * (1 + 1e-9) + 1e-12 * abs(v * k)
    if abs(x - v * k) > tol:
        fail('%r shows %g, but the value is %r x %r = %r' % (text, x, v, k, v * k))
    src = el.get('data-src')
    if src:
        n, _, ptr = src.partition(':')
        try:
            want = pointer(docs[int(n)], ptr)
        except (KeyError, IndexError, ValueError) as e:
            fail('%s: no such field in %s (%s)' % (src, inputs[int(n) - 1], e))
            continue
        if float(want) != v:
            fail('%s: the report says %r, %s says %r' % (src, v, inputs[int(n) - 1], want))
        sourced += 1
        quoted.add((int(n), ptr))
    elif not el.get('data-calc'):
        fail('%r has neither data-src nor data-calc' % text)

for i, d in docs.items():
    if 'traceEvents' in d:
        continue
    if not any(n == i for n, _ in quoted):
        fail('input %d (%s) is never quoted' % (i, inputs[i - 1]))
    # the key figures of each kind
    want = []
    kind = d.get('kind')
    if kind == 'plan-train' and d['counts'] and d['counts'][0]['candidates']:
        want = ['/counts/0/candidates/0/step_time_s', '/counts/0/candidates/0/tokens_per_s', '/counts/0/candidates/0/mfu']
        want += ['/prices/%d/usd_per_gpu_hour' % j for j, p in enumerate(d['prices']) if 'usd_per_gpu_hour' in p]
        want += ['/scaling/%d/efficiency' % j for j in range(len(d.get('scaling', [])))]
    elif kind == 'train':
        want = ['/step_time_s', '/mfu'] + ['/memory/%d/peak_bytes' % s for s in range(len(d['memory']))]
    elif kind == 'plan-capacity':
        for s, x in enumerate(d['systems']):
            if x['feasible']:
                want += ['/systems/%d/gpus' % s, '/systems/%d/days' % s]
                want += ['/systems/%d/rent/%d/total_usd' % (s, j) for j in range(len(x['rent']))]
    elif kind == 'plan-serve':
        want = ['/deployments/%d/usd_per_month' % j for j in range(len(d['deployments']))]
    elif kind == 'serve':
        want = ['/ttft_s/p99', '/tpot_s/p99', '/requests_per_s']
    elif kind == 'validate':
        want = ['/overall/mape'] + ['/sources/%d/mape' % j for j in range(len(d['sources']))]
    for ptr in want:
        if (i, ptr) not in quoted:
            fail('%s %s is not shown' % (inputs[i - 1], ptr))

# ---- Markdown ----------------------------------------------------------------------------------
md_refs = 0
md_path = os.path.join(out, 'report.md')
if os.path.exists(md_path):
    md = open(md_path).read()
    for ref in re.findall(r'\]\(([^)#][^)]*)\)', md):
        md_refs += 1
        p = os.path.join(out, ref)
        if not os.path.isfile(p) or os.path.getsize(p) == 0:
            fail('report.md names %s, which is missing or empty' % ref)

# ---- manifest and chart data -------------------------------------------------------------------
listed = {}
for line in open(os.path.join(out, 'manifest.txt')):
    if line.startswith('#'):
        continue
    name, size = line.rstrip('\n').split('\t')
    listed[name] = int(size)
present = {}
for base, _, files in os.walk(out):
    for f in files:
        rel = os.path.relpath(os.path.join(base, f), out)
        if rel != 'manifest.txt':
            present[rel] = os.path.getsize(os.path.join(base, f))
if listed != present:
    fail('manifest.txt does not match the files: %s' % sorted(set(listed.items()) ^ set(present.items()))[:6])
series = 0
for rel in sorted(present):
    if not rel.endswith('.dat'):
        continue
    text = open(os.path.join(out, rel)).read()
    blocks = [b for b in re.split(r'\n\n\n', text)]
    heads = re.findall(r'^# series: (.+)$', text, re.M)
    if len(heads) != len(blocks) or not heads:
        fail('%s: %d series headers but %d data blocks' % (rel, len(heads), len(blocks)))
    for b in blocks:
        rows = [l for l in b.split('\n') if l and not l.startswith('#')]
        if not rows:
            fail('%s: an empty series' % rel)
    series += len(heads)

print('report_check: %d numbers shown (%d read back from the inputs), %d images, %d links, %d Markdown references, '
      '%d files in the manifest, %d chart series' % (shown, sourced, imgs, links, md_refs, len(listed), series))
if fails:
    for f in fails[:20]:
        print('FAIL: ' + f)
    sys.exit(1)
