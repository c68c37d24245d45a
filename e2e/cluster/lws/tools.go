//go:build tools

// Pins the LeaderWorkerSet controller (sigs.k8s.io/lws) that e2e/cluster/build compiles.
package tools

import _ "sigs.k8s.io/lws/cmd"
