package rulesfile_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
)

func ExampleParse() {
	rules, err := rulesfile.Parse([]byte(`
rules:
  - name: per-user
    resource: "GET /items/{id}"
    kind: hotspot
    param: header:X-User-ID
    limit: 10
    burst: 5
    overrides: {vip: 1000}
  - resource: "*"
    kind: concurrency
    limit: 200
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rules {
		fmt.Printf("%s: %s %s limit %d window %v algorithm %q\n", r.Name, r.Kind, r.Resource, r.Limit, r.Window, r.Algorithm)
	}

	_, err = rulesfile.Parse([]byte(`
rules:
  - resource: "GET /items/{id}"
    kind: flow
    limit: ten
    algoritm: token-bucket
  - name: per-user
    resource: "*"
    kind: hotspot
    param: header:X-User-ID
    limit: -5
`))
	fmt.Println(err)
	// Output:
	// per-user: hotspot GET /items/{id} limit 10 window 1s algorithm "token-bucket"
	// concurrency:*: concurrency * limit 200 window 0s algorithm ""
	// rules[0]: line 6: unknown field "algoritm" (did you mean "algorithm"?)
	// rules[0]: line 5: limit must be an integer, got "ten"
	// rules[1] (per-user): line 11: limit must be >= 0, got -5
}

func ExampleNewGuard() {
	dir, err := os.MkdirTemp("", "rules")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "rules.yaml")
	err = os.WriteFile(path, []byte(`rules:
  - name: hello
    resource: GET /hello
    kind: flow
    limit: 5
  - name: per-user
    resource: GET /items/{id}
    kind: hotspot
    param: header:X-User-ID
    limit: 3
    store: redis
`), 0o600)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The Guard has no store named redis: core.New refuses the rule, and
	// the error gives its line in the file.
	_, err = rulesfile.NewGuard(path)
	fmt.Println(strings.TrimPrefix(err.Error(), "rules file "+path+": "))

	// Without the store, the Guard starts.
	data, _ := os.ReadFile(path)
	_ = os.WriteFile(path, bytes.ReplaceAll(data, []byte("    store: redis\n"), nil), 0o600)
	guard, err := rulesfile.NewGuard(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer guard.Close()
	fmt.Println(len(guard.Rules()), "rules")
	// Output:
	// rules[1] (per-user): line 6: store "redis" is not given to the Guard (core.WithStore)
	// 2 rules
}

// A rules list inside another configuration file decodes into a Rules,
// with the checks of a rules file; core.New validates the rules.
func ExampleRules() {
	var config struct {
		Addr  string          `json:"addr"`
		Rules rulesfile.Rules `json:"rules"`
	}
	err := json.Unmarshal([]byte(`{
  "addr": ":8080",
  "rules": [{"resource": "GET /hello", "kind": "flow", "limit": 5, "window": "1s"}]
}`), &config)
	if err != nil {
		fmt.Println(err)
		return
	}
	guard, err := core.New(core.WithRules(config.Rules...))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer guard.Close()
	fmt.Println(guard.Rules()[0].Name)

	err = json.Unmarshal([]byte(`{"rules": [{"resource": "GET /hello", "kind": "flow", "limit": 5, "window": 1}]}`), &config)
	fmt.Println(err)
	// Output:
	// flow:GET:/hello
	// rules[0]: line 1: window must be a Go duration such as 1s or 250ms, got 1
}
