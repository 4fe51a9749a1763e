#!/usr/bin/env bash
# Side-by-side flood benchmark (issue 2): a prompt turn of N session/update
# notifications (default 200,000) from bench/floodagent to bench/floodhost,
# over a direct pipe and through "acpmux run --", ROUNDS times each,
# alternating. Prints the median seconds of each, their ratio (target
# <= 1.25) and acpmux's peak RSS (target < 100 MB).
#
#   bench/flood.sh [ROUNDS] [N]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-7}"; N="${2:-200000}"
BIN="$(mktemp -d)"; trap 'rm -rf "$BIN"' EXIT
go build -o "$BIN/floodagent" ./bench/floodagent
go build -o "$BIN/floodhost" ./bench/floodhost
go build -o "$BIN/acpmux" ./cmd/acpmux
direct=(); relayed=(); rss=0
for _ in $(seq "$ROUNDS"); do
  d=$("$BIN/floodhost" -want "$N" "$BIN/floodagent" -n "$N")
  r=$("$BIN/floodhost" -want "$N" "$BIN/acpmux" run --log-level error -- "$BIN/floodagent" -n "$N")
  direct+=("$(sed -E 's/.*"seconds": ([0-9.]+).*/\1/' <<<"$d")")
  relayed+=("$(sed -E 's/.*"seconds": ([0-9.]+).*/\1/' <<<"$r")")
  k=$(sed -E 's/.*"maxRSSKB": ([0-9]+).*/\1/' <<<"$r"); [ "$k" -gt "$rss" ] && rss=$k
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
md=$(median "${direct[@]}"); mr=$(median "${relayed[@]}")
awk -v n="$N" -v r="$ROUNDS" -v d="$md" -v m="$mr" -v k="$rss" -v dl="${direct[*]}" -v rl="${relayed[*]}" 'BEGIN {
  printf "flood of %d session/update notifications, %d rounds\n", n, r
  printf "direct pipe:   median %.3f s  (%s)\n", d, dl
  printf "through acpmux: median %.3f s  (%s)\n", m, rl
  printf "ratio acpmux/direct: %.2fx (target <= 1.25x)\n", m/d
  printf "acpmux peak RSS: %.1f MB (target < 100 MB)\n", k/1024
}'
