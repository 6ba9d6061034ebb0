#!/usr/bin/env bash
# mk/judge.sh — the development checks every model and gate choice in
# training/doc.go is judged by, for one model file behind one gate, on the
# testbed profile. Run by `make model-judge`; see mk/model.mk.
#
#   mk/judge.sh PROFLOW MODEL GATE DIR
#
# PROFLOW is a proflow binary (no torch needed), MODEL a model file, GATE a
# gate file (policy.GateConfig JSON), DIR where the reports go. It runs,
# each with 2 repeats and the deployable rules beside the agent:
#   - the development family D1–D64 at base seeds 1 and 1000,
#   - the second development family E1–E64 at base seeds 1 and 1000,
#   - the built-in scenarios (-scenarios all) at base seeds 1 and 1000,
#   - the built-in kind scenarios (-scenarios kinds) at base seed 1,
#   - the development kinds family J1–J64 at base seeds 1 and 1000,
#   - the development families of 6 and 16 switches at base seed 1,
#   - the second development families of 6 and 16 switches (E6x3-…,
#     E16x3-…) at base seed 1 (since session 32),
#   - the 24 S6 variants of docs/scenarios/s6-rolling at base seeds 1
#     and 1000,
# and writes DIR/summary.md: per check the agent's mean and the scenarios
# where it is more than 2% behind the per-scenario best rule, and per kind
# of protected flow its SLO seconds against the best rule. No held-out
# family is run: these are the checks a choice may look at.
set -euo pipefail
if [ $# -ne 4 ]; then
  echo "usage: $0 PROFLOW MODEL GATE DIR" >&2
  exit 2
fi
P=$1 M=$2 G=$3 D=$4
for f in "$P" "$M" "$G"; do
  [ -e "$f" ] || { echo "judge: $f does not exist" >&2; exit 2; }
done
mkdir -p "$D"
RULES=static,reactive,crowd,throughput-drop,latency-threshold
S6=()
for f in docs/scenarios/s6-rolling/*.json; do S6+=(-scenario-file "$f"); done
[ ${#S6[@]} -eq 48 ] || { echo "judge: want the 24 files of docs/scenarios/s6-rolling, found $((${#S6[@]} / 2))" >&2; exit 2; }

run() { # run NAME ARGS...: one proflow evaluate into DIR/NAME
  local name=$1; shift
  echo "judge: $name" >&2
  "$P" evaluate "$@" -policies "$RULES,agent" -repeats 2 -model "$M" -gate "$G" -out "$D/$name" > "$D/$name.log" 2>&1 ||
    { echo "judge: $name failed; see $D/$name.log" >&2; tail -5 "$D/$name.log" >&2; exit 1; }
}
for s in 1 1000; do
  run "dev-$s" -scenarios dev -seed "$s"
  run "dev2-$s" -scenarios dev2 -seed "$s"
  run "builtin-$s" -scenarios all -seed "$s"
  run "s6-$s" "${S6[@]}" -seed "$s"
done
run kinds -scenarios kinds -seed 1
for s in 1 1000; do run "devkinds-$s" -scenarios dev-kinds -seed "$s"; done
run dev6x3 -profile testbed-6x3 -scenarios dev -seed 1
run dev16x3 -profile testbed-16x3 -scenarios dev -seed 1
run dev26x3 -profile testbed-6x3 -scenarios dev2 -seed 1
run dev216x3 -profile testbed-16x3 -scenarios dev2 -seed 1

mean() { # the agent's mean throughput (MB/s) in a report's strongest-rule table
  grep -m1 '^| agent ' "$1/report.md" | cut -d'|' -f4 | tr -d ' '
}
kindrows() { # the agent's per-kind row of a report: kind, SLO, best rule, its SLO, ratio, CI, quiet-trap moves
  sed -n '/^## Per flow kind/,/^## /p' "$1/report.md" | awk -F'|' '$3 ~ /agent/ { gsub(/ /, "", $2); printf "| %s |%s|%s|%s|%s|%s|%s|\n", $2, $5, $6, $7, $8, $9, $22 }'
}
worse() { # the scenarios of kind $2 where the agent is worse than their strongest rule
  awk -F, -v k="$2" '$1 == k && $2 == "agent" && $11 == "worse" { printf "%s%s", n++ ? ", " : "", $3 } END { if (!n) printf "none" }' "$1/kinds.csv"
}
behind() { # scenarios more than 2% behind the per-scenario best rule; $2 filters names
  awk -F, -v skip="${2:-^$}" 'NR > 1 && $6 < -0.02 && $1 !~ skip { printf "%s%s (%.1f%%)", n++ ? ", " : "", $1, -100 * $6 } END { if (!n) printf "none" }' "$1/strongest.csv"
}
{
  echo "# Development checks: $M behind $G"
  echo
  echo "Each check: proflow evaluate, 2 repeats, the agent against the deployable rules ($RULES);"
  echo "\"behind\" lists the scenarios where its mean throughput is more than 2% below the per-scenario best rule's."
  echo "Bulk throughput only: the kind scenarios are judged by their SLO seconds below."
  echo
  echo "| check | agent (MB/s) | more than 2% behind |"
  echo "| --- | --- | --- |"
  for s in 1 1000; do echo "| D1–D64, base seed $s | $(mean "$D/dev-$s") | $(behind "$D/dev-$s") |"; done
  for s in 1 1000; do echo "| E1–E64, base seed $s | $(mean "$D/dev2-$s") | $(behind "$D/dev2-$s") |"; done
  for s in 1 1000; do echo "| bulk built-ins (S, C, N), base seed $s | – | $(behind "$D/builtin-$s" '^[ORQTV][0-9]') |"; done
  for s in 1 1000; do echo "| S6's 24 variants, base seed $s | $(mean "$D/s6-$s") | $(behind "$D/s6-$s") |"; done
  echo "| D6x3-1…64 (testbed-6x3), base seed 1 | $(mean "$D/dev6x3") | $(behind "$D/dev6x3") |"
  echo "| D16x3-1…64 (testbed-16x3), base seed 1 | $(mean "$D/dev16x3") | $(behind "$D/dev16x3") |"
  echo "| E6x3-1…64 (testbed-6x3), base seed 1 | $(mean "$D/dev26x3") | $(behind "$D/dev26x3") |"
  echo "| E16x3-1…64 (testbed-16x3), base seed 1 | $(mean "$D/dev216x3") | $(behind "$D/dev216x3") |"
  echo
  echo "Kind built-ins, base seed 1 (SLO seconds against the best single rule; onoff also counted per scenario against its strongest rule):"
  echo
  echo "| kind | SLO (s) | best rule | its SLO (s) | ratio | CI | quiet-trap moves |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
  kindrows "$D/kinds"
  echo
  echo "onoff scenarios worse than their strongest rule: $(worse "$D/kinds" onoff)"
  echo
  echo "Development kinds family J1–J64 (the held-out kinds family's design from another seed), per kind against the best single rule:"
  echo
  echo "| base seed | kind | SLO (s) | best rule | its SLO (s) | ratio | CI | quiet-trap moves | worse than their strongest rule |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
  for s in 1 1000; do
    kindrows "$D/devkinds-$s" | while IFS= read -r row; do
      k=$(echo "$row" | cut -d'|' -f2 | tr -d ' ')
      echo "| $s $row $(worse "$D/devkinds-$s" "$k") |"
    done
  done
} > "$D/summary.md"
cat "$D/summary.md"
