#!/usr/bin/env bash
# The GitHub Action's check step (action.yml) as a plain script, so that it can be run and tested
# outside GitHub: `retrystorm check` on every model, a JUnit file each, the markdown tables
# appended to $GITHUB_STEP_SUMMARY, `verdict=pass|fail` written to $GITHUB_OUTPUT.
#
# Inputs (the action's, as environment variables):
#   RS_MODELS     a glob of model files (`**` allowed), e.g. 'models/*.toml'; or the model files
#                 as arguments instead
#   RS_SEEDS      seeds per check (default 5)
#   RS_BASELINE   optional: a saved `--json` report, or a folder of them named <model stem>.json
#                 (a model without one is checked against its expectations alone)
#   RS_TOLERANCE  how much worse a metric may get against the baseline (default 0%)
#   RS_JUNIT_DIR  where the JUnit files go (default retrystorm-junit)
#   RS_BIN        the retrystorm binary (default: retrystorm on PATH)
# Exit: 0 when every check passed, else the worst code of the checks (docs/cli.md: 1 a check
# failed, 2 bad input, 4 a baseline compared less than it holds); 2 when no model matched.
set -uo pipefail
shopt -s globstar nullglob

bin=${RS_BIN:-retrystorm}
seeds=${RS_SEEDS:-5}
tolerance=${RS_TOLERANCE:-0%}
baseline=${RS_BASELINE:-}
junit_dir=${RS_JUNIT_DIR:-retrystorm-junit}
summary=${GITHUB_STEP_SUMMARY:-/dev/null}
output=${GITHUB_OUTPUT:-/dev/null}

if [ $# -gt 0 ]; then
  models=("$@")
else
  # Unquoted on purpose: the glob expands here.
  # shellcheck disable=SC2206
  models=(${RS_MODELS:-models/*.toml})
fi
if [ ${#models[@]} -eq 0 ]; then
  echo "retrystorm check: no model file matches '${RS_MODELS:-models/*.toml}'" >&2
  echo "verdict=error" >>"$output"
  exit 2
fi
mkdir -p "$junit_dir"
md=$(mktemp)
err=$(mktemp)
trap 'rm -f "$md" "$err"' EXIT

failed=0
worst=0
for m in "${models[@]}"; do
  stem=$(basename "$m" .toml)
  args=(check "$m" --seeds "$seeds" --junit "$junit_dir/$stem.xml" --md "$md")
  if [ -n "$baseline" ]; then
    if [ -d "$baseline" ]; then
      [ -f "$baseline/$stem.json" ] && args+=(--baseline "$baseline/$stem.json" --tolerance "$tolerance")
    else
      args+=(--baseline "$baseline" --tolerance "$tolerance")
    fi
  fi
  : >"$md"
  "$bin" "${args[@]}" 2>"$err"
  code=$?
  cat "$err" >&2
  if [ -s "$md" ]; then
    cat "$md" >>"$summary"
  else
    # The check stopped before its report (bad input): the message instead of the table.
    { echo "### $m"; echo; echo '```'; cat "$err"; echo '```'; } >>"$summary"
  fi
  echo >>"$summary"
  if [ "$code" -ne 0 ]; then
    failed=$((failed + 1))
    [ "$code" -gt "$worst" ] && worst=$code
  fi
done

if [ "$failed" -eq 0 ]; then
  echo "verdict=pass" >>"$output"
else
  echo "verdict=fail" >>"$output"
fi
echo "failed=$failed" >>"$output"
echo "checked=${#models[@]}" >>"$output"
echo "retrystorm check: $failed of ${#models[@]} model(s) failed" >&2
# The worst exit code of the checks: 1 a failed check, 2 bad input, 4 an incomplete baseline.
exit "$worst"
