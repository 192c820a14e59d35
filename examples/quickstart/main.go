// Command quickstart drives a sluice Guard directly, without a web framework:
// it loads rules (an embedded default, or -rules FILE), sends steady and
// bursty traffic at two resources for a few seconds, and prints per second
// how many requests each resource passed and blocked, and which rule blocked
// them.
//
//	go -C examples run ./quickstart
//	go -C examples run ./quickstart -rules my-rules.yaml -duration 10s
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
)

//go:embed rules.yaml
var defaultRules []byte

func main() {
	rulesFile := flag.String("rules", "", "rules file (YAML, or JSON with a .json name); default: the embedded rules.yaml")
	duration := flag.Duration("duration", 4*time.Second, "how long to drive traffic")
	flag.Parse()
	if err := run(os.Stdout, *rulesFile, *duration); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run loads the rules, drives traffic for d and writes the table to w.
func run(w io.Writer, rulesFile string, d time.Duration) error {
	var rules []core.Rule
	var err error
	if rulesFile != "" {
		rules, err = rulesfile.Load(rulesFile)
	} else {
		rules, err = rulesfile.Parse(defaultRules)
	}
	if err != nil {
		return err
	}
	g, err := core.New(core.WithRules(rules...))
	if err != nil {
		return err
	}
	defer g.Close()
	fmt.Fprintf(w, "%d rules loaded; driving traffic for %s\n", len(rules), d)

	var mu sync.Mutex
	counts := map[string]int{} // "second resource outcome" -> n
	record := func(sec int, resource, outcome string) {
		mu.Lock()
		counts[fmt.Sprintf("%d\t%s\t%s", sec, resource, outcome)]++
		mu.Unlock()
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	// drive sends requests to resource every interval from workers
	// goroutines, each request taking work to complete.
	drive := func(resource string, workers int, interval, work time.Duration) {
		for i := 0; i < workers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tick := time.NewTicker(interval)
				defer tick.Stop()
				for {
					select {
					case <-ctx.Done():
						return
					case <-tick.C:
					}
					sec := int(time.Since(start) / time.Second)
					e, err := g.Enter(ctx, resource)
					var b *core.BlockedError
					switch {
					case errors.As(err, &b):
						record(sec, resource, "blocked by "+b.Rule)
						continue
					case err != nil:
						continue // the context ended while waiting
					}
					time.Sleep(work)
					e.Exit(nil)
					record(sec, resource, "passed")
				}
			}()
		}
	}
	drive("GET /items/{id}", 4, 10*time.Millisecond, time.Millisecond) // ~400/s against 100/s
	drive("GET /slow", 20, 20*time.Millisecond, 30*time.Millisecond)   // ~1000/s, 30ms each, against 10 in flight
	wg.Wait()

	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintln(w, "second\tresource\toutcome\trequests")
	for _, k := range keys {
		fmt.Fprintf(w, "%s\t%d\n", k, counts[k])
	}
	return nil
}
