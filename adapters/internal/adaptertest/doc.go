// Package adaptertest is the behaviour suite every HTTP adapter of sluice
// passes: each adapter's tests build a server of their framework serving
// the suite's routes through the adapter, and Run drives it with a real
// http.Client over a real loopback listener.
package adaptertest
