//go:build tools

// Pins helm (helm.sh/helm/v4) that e2e/cluster/build compiles: the chart's lint and its install,
// upgrade and uninstall against the e2e stack's API server.
package tools

import _ "helm.sh/helm/v4/cmd/helm"
