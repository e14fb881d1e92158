#!/usr/bin/env bash
# The GitHub Action's SARIF step (action.yml, input `sarif`) as a plain script: `retrystorm
# explain --sarif` on every model, one SARIF 2.1.0 file each in RS_SARIF_DIR, for
# github/codeql-action/upload-sarif. A model that does not load is skipped here (the check step
# reports it).
#
# Inputs (the action's, as environment variables):
#   RS_MODELS     a glob of model files (`**` allowed); or the model files as arguments instead
#   RS_SARIF_DIR  where the SARIF files go (default retrystorm-sarif)
#   RS_BIN        the retrystorm binary (default: retrystorm on PATH)
# Exit: 0, also when a model has findings (code scanning shows them); 2 when no model matched.
set -uo pipefail
shopt -s globstar nullglob

bin=${RS_BIN:-retrystorm}
dir=${RS_SARIF_DIR:-retrystorm-sarif}

if [ $# -gt 0 ]; then
  models=("$@")
else
  # Unquoted on purpose: the glob expands here.
  # shellcheck disable=SC2206
  models=(${RS_MODELS:-models/*.toml})
fi
if [ ${#models[@]} -eq 0 ]; then
  echo "retrystorm explain --sarif: no model file matches '${RS_MODELS:-models/*.toml}'" >&2
  exit 2
fi
mkdir -p "$dir"
for m in "${models[@]}"; do
  # One file per model, named after its path so that two models of one name do not collide.
  name=$(printf '%s' "${m%.toml}" | tr '/' '_')
  if ! "$bin" --quiet explain "$m" --sarif "$dir/$name.sarif" >/dev/null; then
    echo "retrystorm explain --sarif: skipped $m (it does not load)" >&2
  fi
done
exit 0
