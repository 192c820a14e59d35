//go:build tools

package oracle

import _ "github.com/envoyproxy/ratelimit/src/service_cmd"
