#!/usr/bin/env bash
# stream-json benchmark (issue 12): one prompt turn of N agent_message_chunk
# notifications (default 200,000) from bench/floodagent, through "acpmux
# run" to bench/floodhost (the IDE decodes every message) and through
# "acpmux stream-json" to bench/sjhost (the script decodes every line),
# with and without --include-partial-messages, ROUNDS times each,
# interleaved. Prints the median seconds and the ratios to run (target
# <= 1.5x).
#
#   bench/streamjson.sh [ROUNDS] [N]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-5}"; N="${2:-200000}"
BIN="$(mktemp -d)"; trap 'rm -rf "$BIN"' EXIT
go build -o "$BIN/" ./cmd/acpmux ./bench/floodagent ./bench/floodhost ./bench/sjhost
run=(); sj=(); sjp=()
secs() { sed -E 's/.*"seconds": ([0-9.]+).*/\1/'; }
for _ in $(seq "$ROUNDS"); do
  run+=("$("$BIN/floodhost" -want "$N" "$BIN/acpmux" run --state :memory: --log-level error -- "$BIN/floodagent" -n "$N" | secs)")
  sj+=("$("$BIN/sjhost" "$BIN/acpmux" stream-json --state :memory: --log-level error -- "$BIN/floodagent" -n "$N" | secs)")
  sjp+=("$("$BIN/sjhost" -partial -want "$N" "$BIN/acpmux" stream-json --state :memory: --log-level error --include-partial-messages -- "$BIN/floodagent" -n "$N" | secs)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
mr=$(median "${run[@]}"); ms=$(median "${sj[@]}"); mp=$(median "${sjp[@]}")
awk -v n="$N" -v r="$ROUNDS" -v a="$mr" -v b="$ms" -v c="$mp" -v al="${run[*]}" -v bl="${sj[*]}" -v cl="${sjp[*]}" 'BEGIN {
  printf "prompt turn of %d chunks, %d rounds (median seconds)\n", n, r
  printf "acpmux run:                                  %.3f  (%s)\n", a, al
  printf "acpmux stream-json:                          %.3f  (%s)  ratio %.2fx\n", b, bl, b/a
  printf "acpmux stream-json --include-partial-messages: %.3f  (%s)  ratio %.2fx (target <= 1.5x)\n", c, cl, c/a
}'
