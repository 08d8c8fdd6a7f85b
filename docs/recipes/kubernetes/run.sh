#!/usr/bin/env bash
# The three steps in order, each waiting for the last: the plan, the shards, the merge. Put
# the learners' folders in the volume's submissions/ first (see README.md).
set -euo pipefail
cd "$(dirname "$0")"
kubectl apply -f storage.yaml
kubectl apply -f plan.yaml
kubectl wait --for=condition=complete --timeout=30m job/lessons-plan
kubectl apply -f shards.yaml
# Complete, or failed with some shards (maxFailedIndexes): the merge then says which.
kubectl wait --for=condition=complete --timeout=24h job/lessons-shards ||
  echo "lessons-shards did not complete: the merge names the shards that are missing" >&2
kubectl apply -f merge.yaml
kubectl wait --for=condition=complete --timeout=2h job/lessons-merge
kubectl logs job/lessons-merge
