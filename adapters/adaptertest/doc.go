// Package adaptertest is the behaviour suite every HTTP adapter of sluice
// passes: each adapter's tests build a server of their framework serving
// the suite's routes through the adapter, and Run drives it with a real
// http.Client over a real loopback listener. An adapter for another
// framework can run it too.
//
// It is exported, rather than internal, because the adapters are modules
// of their own, and no module imports another module's internal packages.
package adaptertest
