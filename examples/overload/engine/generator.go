package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"time"
)

// generatorEnv, set to 1 in its environment, makes the command a load
// generator: it reads a job from its standard input, runs it, and writes
// the outcomes to its standard output. The command runs its load
// generator so, as a child process, as clients elsewhere would be: in the
// server's process, the goroutines that send the requests and read the
// answers wait for a P behind the cpu backend's handlers, which the Go
// scheduler preempts after 10ms, and that wait added 20-30ms to each
// latency at 2x-10x the capacity, as much as the unloaded latency (see
// the doc); the operating system runs a process the network wakes
// without waiting for the handlers' slices.
const generatorEnv = "SLUICE_OVERLOAD_GENERATOR"

// job is what a load generator runs: the streams of requests to URL for
// Total, open loop; or, when Clients > 0, closed loop: Clients clients,
// each sending a request as soon as its previous one ended.
type job struct {
	URL             string
	Streams         []stream
	Clients         int
	Total, Deadline time.Duration
}

// generatorHeader is the header of the load generator's process ID, on
// each request it sends.
const generatorHeader = "X-Load-Generator"

// run runs j and returns the outcomes by stream (closed loop: one, each
// outcome at the time its request ended).
func (j job) run(ctx context.Context) [][]outcome {
	tr := &http.Transport{MaxIdleConnsPerHost: 1 << 12}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	pid := strconv.Itoa(os.Getpid())
	if j.Clients == 0 {
		streams := slices.Clone(j.Streams)
		for i := range streams {
			streams[i].Header = streams[i].Header.Clone()
			if streams[i].Header == nil {
				streams[i].Header = http.Header{}
			}
			streams[i].Header.Set(generatorHeader, pid)
		}
		return drive(ctx, client, j.URL, streams, j.Total, j.Deadline)
	}
	header := http.Header{generatorHeader: {pid}}
	start := time.Now()
	var mu sync.Mutex
	var outs []outcome
	var wg sync.WaitGroup
	for range j.Clients {
		wg.Go(func() {
			for ctx.Err() == nil && time.Since(start) < j.Total {
				o := send(client, j.URL, header, start, time.Since(start), j.Deadline)
				o.at += o.latency
				mu.Lock()
				outs = append(outs, o)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return [][]outcome{outs}
}

// generate runs j: in a child process, or in this one when inProcess.
func generate(ctx context.Context, j job, inProcess bool) ([][]outcome, error) {
	if inProcess {
		return j.run(ctx), ctx.Err()
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	in, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), generatorEnv+"=1")
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("load generator: %w", err)
	}
	return readOutcomes(out, max(1, len(j.Streams)))
}

// generator is the load generator's main: it runs the job read from in,
// writing its outcomes to out, a line each: stream, due, latency, result.
func generator(ctx context.Context, in io.Reader, out io.Writer) error {
	var j job
	if err := json.NewDecoder(in).Decode(&j); err != nil {
		return fmt.Errorf("reading the job: %w", err)
	}
	w := bufio.NewWriter(out)
	for i, stream := range j.run(ctx) {
		for _, o := range stream {
			fmt.Fprintf(w, "%d %d %d %d\n", i, o.at, o.latency, o.result)
		}
	}
	return w.Flush()
}

// readOutcomes reads what generator wrote, of streams streams.
func readOutcomes(b []byte, streams int) ([][]outcome, error) {
	outs := make([][]outcome, streams)
	s := bufio.NewScanner(bytes.NewReader(b))
	for s.Scan() {
		var i int
		var o outcome
		if _, err := fmt.Sscan(s.Text(), &i, &o.at, &o.latency, &o.result); err != nil || i < 0 || i >= streams {
			return nil, errors.Join(fmt.Errorf("load generator: bad line %q", s.Text()), err)
		}
		outs[i] = append(outs[i], o)
	}
	return outs, s.Err()
}
