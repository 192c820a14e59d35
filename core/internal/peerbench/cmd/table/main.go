// Command table runs the peer benchmarks of core/internal/peerbench and
// adapters/grpc/internal/peerbench in alternating rounds and writes their
// table, with the machine it ran on, into core/internal/peerbench/README.md
// (between its table markers) and to standard output:
//
//	go -C core/internal/peerbench run ./cmd/table
//
// Each round runs, for each row, sluice's benchmark and its peers' as
// processes of their own, sluice first in even rounds and last in odd
// ones. The figures are medians over the rounds; a ratio is the median of
// the rounds' ratios of the process CPU time per operation (cpu-ns/op),
// peer over sluice: above 1 when sluice is cheaper.
package main

import (
	"fmt"
	"log"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sluicekit/sluice/core/internal/peerbench/benchtable"
)

// bench is one benchmark function of a module's test binary.
type bench struct {
	mod  string // "core" or "grpc"
	name string // BenchmarkX
	what string // what it runs, for the table
}

// row is a path of sluice and the peers doing the same work, with the
// least ratio the issue asks for each peer (0: none).
type row struct {
	path    string
	sluice  bench
	peers   []bench
	targets []float64
	limit   float64 // at most this many cpu-ns/op for sluice, when no peer (0: none asked)
}

var rows = []row{
	{path: "one flow rule, passing", sluice: bench{"core", "BenchmarkPassSluiceFlow", "Enter+Exit"},
		peers:   []bench{{"core", "BenchmarkPassXTimeRate", "x/time/rate Allow"}, {"core", "BenchmarkPassUber", "uber Take"}},
		targets: []float64{1.0, 0.8}},
	{path: "no rule (statistics only)", sluice: bench{"core", "BenchmarkNoRuleSluice", "Enter+Exit"}, limit: 40},
	{path: "blocked request", sluice: bench{"core", "BenchmarkBlockedSluiceFlow", "Enter, flow rule used up"},
		peers:   []bench{{"core", "BenchmarkBlockedXTimeRate", "x/time/rate Allow, exhausted"}},
		targets: []float64{1.0}},
	{path: "hotspot rule, 10k users", sluice: bench{"core", "BenchmarkHotspot10kSluice", "Enter+Exit"},
		peers:   []bench{{"core", "BenchmarkHotspot10kSethvargo", "sethvargo Take"}},
		targets: []float64{0.8}},
	{path: "hotspot rule, 1M users, table holds all", sluice: bench{"core", "BenchmarkHotspot1MSluice", "Enter+Exit, MaxKeys 2M"},
		peers:   []bench{{"core", "BenchmarkHotspot1MSethvargo", "sethvargo Take"}},
		targets: []float64{1.0}},
	{path: "gRPC unary, one flow rule, 8 metadata headers", sluice: bench{"grpc", "BenchmarkUnarySluiceFlow", "interceptor + handler"},
		peers:   []bench{{"grpc", "BenchmarkUnaryGoGRPCMiddlewareXTimeRate", "go-grpc-middleware v2 ratelimit + x/time/rate"}},
		targets: []float64{1.0}},
	{path: "gRPC unary, the handler alone", sluice: bench{"grpc", "BenchmarkUnaryHandler", "baseline: a pass-through interceptor + handler, no limiter"}},
}

func main() {
	f := benchtable.ParseFlags()
	log.SetFlags(0)

	dir, err := os.MkdirTemp("", "peertable")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bins := map[string]string{}
	for name, pkg := range map[string]string{"core": ".", "grpc": "../../../adapters/grpc/internal/peerbench"} {
		if bins[name], err = benchtable.Build(dir, name, pkg); err != nil {
			log.Fatal(err)
		}
	}
	load := benchtable.LoadAvg()
	started := time.Now().UTC()

	all := map[string][]benchtable.Result{} // by benchmark name, one per round
	for r := range f.Rounds {
		for _, rw := range rows {
			order := append([]bench{rw.sluice}, rw.peers...)
			if r%2 == 1 {
				slices.Reverse(order)
			}
			for _, b := range order {
				res, err := benchtable.Run(bins[b.mod], b.name, f.Benchtime)
				if err != nil {
					log.Fatal(err)
				}
				all[b.name] = append(all[b.name], res)
			}
		}
		log.Printf("round %d of %d done", r+1, f.Rounds)
	}

	var t strings.Builder
	t.WriteString(benchtable.Measured(started, f.Rounds, f.Benchtime, load) + "\n")
	t.WriteString("| path | mode | sluice | ns/op | cpu-ns/op | allocs | peer | ns/op | cpu-ns/op | ratio (peer/sluice cpu-ns) | asked |\n")
	t.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, rw := range rows {
		for _, mode := range []string{"serial", "parallel"} {
			s := all[rw.sluice.name]
			sl := fmt.Sprintf("| %s | %s | %s | %s | %s | %s |", rw.path, mode, rw.sluice.what,
				median(s, mode, "ns/op"), median(s, mode, "cpu-ns/op"), median(s, mode, "allocs/op"))
			if len(rw.peers) == 0 {
				asked := ""
				if rw.limit > 0 {
					asked = fmt.Sprintf("cpu-ns/op ≤ %g", rw.limit)
				}
				fmt.Fprintf(&t, "%s | | | | %s |\n", sl, asked)
				continue
			}
			for i, p := range rw.peers {
				ps := all[p.name]
				fmt.Fprintf(&t, "%s %s | %s | %s | %s | ≥ %.1f |\n", sl, p.what,
					median(ps, mode, "ns/op"), median(ps, mode, "cpu-ns/op"), ratio(s, ps, mode), rw.targets[i])
			}
		}
	}
	fmt.Print(t.String())
	if f.Readme != "" {
		if err := benchtable.ReplaceTable(f.Readme, t.String()); err != nil {
			log.Fatal(err)
		}
	}
}

// median returns the median over the rounds of unit of mode.
func median(rs []benchtable.Result, mode, unit string) string {
	return benchtable.Format(benchtable.Median(benchtable.Values(rs, mode, unit)))
}

// ratio returns the median over the rounds of peer's cpu-ns/op over
// sluice's in mode, and their range.
func ratio(sluice, peer []benchtable.Result, mode string) string {
	var v []float64
	for i := range min(len(sluice), len(peer)) {
		if s := sluice[i][mode]["cpu-ns/op"]; s > 0 {
			v = append(v, peer[i][mode]["cpu-ns/op"]/s)
		}
	}
	return benchtable.Ratio(v)
}
