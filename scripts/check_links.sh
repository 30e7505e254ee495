#!/usr/bin/env bash
# Every relative markdown link in docs/, README.md, CHANGELOG.md and results/README.md must name an existing
# file or folder (anchors after '#' are not checked). Prints each broken link; exit 1 if any.
set -u
cd "$(dirname "$0")/.."
python3 - "$@" <<'PY'
import os, re, subprocess, sys
files = [f for f in subprocess.check_output(['git', 'ls-files', '-co', '--exclude-standard', 'docs', 'README.md',
         'CHANGELOG.md', 'results/README.md'], text=True).split('\n') if f.endswith('.md')]
bad = 0
for f in files:
    text = open(f, encoding='utf-8').read()
    text = re.sub(r'```.*?```', '', text, flags=re.S)      # code blocks hold no links
    text = re.sub(r'`[^`\n]*`', '', text)                   # nor does inline code
    for m in re.finditer(r'\]\(([^)\s]+)(?:\s+"[^"]*")?\)', text):
        target = m.group(1)
        if re.match(r'[a-zA-Z][a-zA-Z0-9+.-]*:|#', target):
            continue
        path = os.path.normpath(os.path.join(os.path.dirname(f), target.split('#')[0]))
        if not os.path.exists(path):
            print(f'{f}: broken link {target}')
            bad += 1
sys.exit(1 if bad else 0)
PY
