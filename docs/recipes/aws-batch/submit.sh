#!/usr/bin/env bash
# Register the job definition, then submit the three steps, each depending on the last: the
# plan, the array of shards (which starts once the plan succeeded), the merge (which starts
# once every child of the array succeeded). Put the learners' folders in the file system's
# submissions/ first (see README.md). Needs the AWS CLI and jq.
set -euo pipefail
cd "$(dirname "$0")"
aws batch register-job-definition --cli-input-json file://job-definition.json > /dev/null
plan=$(aws batch submit-job --cli-input-json file://plan-job.json | jq -r .jobId)
shards=$(jq --arg id "$plan" '.dependsOn[0].jobId = $id' shards-job.json |
  aws batch submit-job --cli-input-json file:///dev/stdin | jq -r .jobId)
merge=$(jq --arg id "$shards" '.dependsOn[0].jobId = $id' merge-job.json |
  aws batch submit-job --cli-input-json file:///dev/stdin | jq -r .jobId)
echo "plan $plan, shards $shards, merge $merge"
