//go:build tools

// The reference server's command is built by Build; this import keeps its
// module's requirements in go.mod.
package oracle

import _ "github.com/envoyproxy/ratelimit/src/service_cmd/runner"
