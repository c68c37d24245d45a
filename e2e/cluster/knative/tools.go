//go:build tools

// Pins Knative Serving (knative.dev/serving): e2e/cluster/build compiles its controller, webhook,
// autoscaler and activator, and takes its CRDs and ConfigMaps from the same module versions.
//
// v0.42.2 (Knative 1.15), not v0.51.0: the module proxy here serves knative.dev/serving v0.51.0
// itself but refuses the versions of knative.dev/pkg, networking, caching and hack it requires
// (their .zip answers 403 "This module version is not available", and the checksum database has no
// record of them); v0.42.2 is the newest release whose whole dependency graph is served and
// verified. e2e/cluster/knative/README.md has the evidence.
package tools

import (
	_ "knative.dev/serving/cmd/activator"
	_ "knative.dev/serving/cmd/autoscaler"
	_ "knative.dev/serving/cmd/controller"
	_ "knative.dev/serving/cmd/webhook"
)
