package benchtable

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	out := []byte(`goos: linux
BenchmarkRedisVsPing-2           	   10000	    150000 ns/op	         1.20 sluice-token-bucket/ping	    1.25 redis_rate/ping
BenchmarkRedisVsPingX-2          	   10000	    1 ns/op
BenchmarkRedis/ping/serial-2     	   20000	     60000 ns/op	     200 B/op	       5 allocs/op
BenchmarkRedis/ping/parallel16   	   40000	     20000 ns/op
PASS
`)
	if got, want := Parse("BenchmarkRedisVsPing", out), (Result{"": {"ns/op": 150000, "sluice-token-bucket/ping": 1.2, "redis_rate/ping": 1.25}}); !reflect.DeepEqual(got, want) {
		t.Errorf("Parse(BenchmarkRedisVsPing) = %v, want %v", got, want)
	}
	want := Result{
		"ping/serial":     {"ns/op": 60000, "B/op": 200, "allocs/op": 5},
		"ping/parallel16": {"ns/op": 20000},
	}
	if got := Parse("BenchmarkRedis", out); !reflect.DeepEqual(got, want) {
		t.Errorf("Parse(BenchmarkRedis) = %v, want %v", got, want)
	}
}

func TestMedianRatio(t *testing.T) {
	if got := Median([]float64{3, 1, 2, 10}); got != 2.5 {
		t.Errorf("Median = %v, want 2.5", got)
	}
	if got := Ratio([]float64{1.3, 1.1, 1.2}); got != "**1.20** (1.10-1.30)" {
		t.Errorf("Ratio = %q", got)
	}
	if got := Ratio(nil); got != "-" {
		t.Errorf("Ratio(nil) = %q, want -", got)
	}
}

func TestReplaceTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(path, []byte("intro\n"+Begin+"old\n"+End+"after\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceTable(path, "| new |\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if want := "intro\n" + Begin + "\n| new |\n\n" + End + "after\n"; string(b) != want {
		t.Errorf("README = %q, want %q", b, want)
	}
	if err := os.WriteFile(path, []byte("no markers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceTable(path, "x"); err == nil {
		t.Error("ReplaceTable without markers: no error")
	}
}
