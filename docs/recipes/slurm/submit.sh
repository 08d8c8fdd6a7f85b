#!/usr/bin/env bash
# The three steps, each waiting for the last to succeed: the plan, the array of shards, the
# merge. Run it from the class's folder (it holds submissions/ and lessons-grader.sif, and
# gets plan.json, shards/, feedback/, out/ and logs/), or set LESSONS_WORK to it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p logs
plan=$(sbatch --parsable "$here/plan.sbatch")
shards=$(sbatch --parsable --dependency="afterok:$plan" "$here/shards.sbatch")
merge=$(sbatch --parsable --dependency="afterok:$shards" "$here/merge.sbatch")
echo "plan $plan, shards $shards, merge $merge"
