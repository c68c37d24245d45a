# shellcheck shell=bash
# testing/lib/deployment.sh — what the tests read from manifests/base/deployment.yaml (sourced, not
# run), so the stacks and the image check read it one way.

# deployment_java_options FILE: the extender container's JAVA_TOOL_OPTIONS value
deployment_java_options() {
  sed -n '/- name: JAVA_TOOL_OPTIONS/,/value:/s/^ *value: "\(.*\)"$/\1/p' "$1"
}
