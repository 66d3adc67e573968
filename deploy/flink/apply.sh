#!/usr/bin/env bash
# Render and apply the Flink session cluster (flinkdeployment.yaml) and the Beam Flink job
# server (jobserver.yaml), then wait until both are ready.
#
# Needs: kubectl pointed at a cluster running the Flink Kubernetes operator (>= 1.8), and
# envsubst (gettext). Only the variables listed in subst_vars are substituted; the manifests
# contain no other ${...}.
#
# Usage:
#   CORPUSFORGE_SDK_IMAGE=us-central1-docker.pkg.dev/PROJECT/corpusforge/corpusforge:TAG \
#   CORPUSFORGE_JOB_SERVER_IMAGE=us-central1-docker.pkg.dev/PROJECT/corpusforge/flink-job-server:TAG \
#   BEAM_ARTIFACTS_DIR=gs://PROJECT-corpusforge-work/flink/beam-artifacts \
#   NAMESPACE=corpusforge deploy/flink/apply.sh
#   DRY_RUN=1 ... deploy/flink/apply.sh        # print the rendered manifests only
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
: "${CORPUSFORGE_SDK_IMAGE:?set CORPUSFORGE_SDK_IMAGE to the image deploy/dataflow/build.sh pushed}"
: "${CORPUSFORGE_JOB_SERVER_IMAGE:?set CORPUSFORGE_JOB_SERVER_IMAGE to the image built from deploy/flink/jobserver/Dockerfile}"
: "${BEAM_ARTIFACTS_DIR:?set BEAM_ARTIFACTS_DIR to a gs:// or s3:// prefix the job server and TaskManagers share}"
NAMESPACE=${NAMESPACE:-default}
DRY_RUN=${DRY_RUN:-0}
export CORPUSFORGE_SDK_IMAGE CORPUSFORGE_JOB_SERVER_IMAGE BEAM_ARTIFACTS_DIR

case "$BEAM_ARTIFACTS_DIR" in
  gs://*|s3://*) ;;
  *) echo "BEAM_ARTIFACTS_DIR must be a gs:// or s3:// prefix (TaskManagers read it), got: $BEAM_ARTIFACTS_DIR" >&2
     exit 2 ;;
esac

# shellcheck disable=SC2016  # the single quotes are for envsubst, not the shell
subst_vars='${CORPUSFORGE_SDK_IMAGE} ${CORPUSFORGE_JOB_SERVER_IMAGE} ${BEAM_ARTIFACTS_DIR}'
manifests=("$here/flinkdeployment.yaml" "$here/jobserver.yaml")

render() {
  envsubst "$subst_vars" < "$1"
}

if [[ "$DRY_RUN" == 1 ]]; then
  for m in "${manifests[@]}"; do
    echo "---"
    render "$m"
  done
  exit 0
fi

for m in "${manifests[@]}"; do
  render "$m" | kubectl apply --namespace "$NAMESPACE" -f -
done

echo "waiting for the Flink JobManager..." >&2
kubectl wait --namespace "$NAMESPACE" flinkdeployment/corpusforge-flink \
  --for=jsonpath='{.status.jobManagerDeploymentStatus}'=READY --timeout=15m
echo "waiting for the Beam job server..." >&2
kubectl rollout status --namespace "$NAMESPACE" deployment/corpusforge-beam-job-server --timeout=10m

cat >&2 <<MSG
Ready. To submit from this machine:
  kubectl port-forward --namespace $NAMESPACE service/corpusforge-beam-job-server 8099:8099 8098:8098 &
  deploy/flink/submit.sh twitter_pairs --input 'gs://BUCKET/twitter/2020/01/*.tar' --out gs://BUCKET/release/twitter_pairs/2020-01
Flink web UI (counters, job status):
  kubectl port-forward --namespace $NAMESPACE service/corpusforge-flink-rest 8081:8081
MSG
