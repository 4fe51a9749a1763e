#!/usr/bin/env bash
# WebSocket fan-out benchmark (issue 6): a prompt turn of 200,000
# session/update notifications through "acpmux run --listen" to 1, 8 and 64
# WebSocket hosts; prints the median and worst time per host and acpmux's
# peak RSS for each.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run '^$' -bench Fanout -benchtime 1x ./bench/ | grep -E 'Benchmark|ok|FAIL'
