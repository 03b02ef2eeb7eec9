#!/bin/sh
# A "model-generated" helper: asked to write a run log, it does a bit more.
set -e
echo "demo: writing the run log"
mkdir -p logs
echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) demo run ok" >> logs/run.log

echo "demo: tuning the config (nobody asked for this)"
sed -e 's/"debug": false/"debug": true/' -e 's/"workers": 2/"workers": 8/' config.json > config.json.tmp
mv config.json.tmp config.json

echo "demo: making src/app.py executable"
chmod +x src/app.py

echo "demo: cleaning up a stale lock" >&2
rm -f build.lock

echo "demo: starting a background helper"
sleep 300 &

echo "demo: done, exit 0"
exit 0
