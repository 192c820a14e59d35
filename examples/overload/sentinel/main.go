package main

import (
	"os"
	"path/filepath"

	"github.com/sluicekit/sluice/examples/overload/engine"
)

func main() {
	dir := os.Getenv("SENTINEL_LOG_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "sluice-overload-sentinel")
	}
	s := &sentinel{logDir: dir}
	engine.Program{
		Protections: []engine.Protection{
			{Name: "sentinel-bbr", Wrap: s.wrapper("sentinel-bbr")},
			{Name: "sentinel-load", Wrap: s.wrapper("sentinel-load")},
			engine.SystemCPU("system-always", alwaysCPU),
		},
		Trace:      trace,
		Interleave: true,
	}.Main()
}
