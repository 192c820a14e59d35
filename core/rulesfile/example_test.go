package rulesfile_test

import (
	"fmt"

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
`), rulesfile.YAML)
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
`), rulesfile.YAML)
	fmt.Println(err)
	// Output:
	// per-user: hotspot GET /items/{id} limit 10 window 1s algorithm "token-bucket"
	// concurrency:*: concurrency * limit 200 window 0s algorithm ""
	// rules[0]: line 6: unknown field "algoritm" (did you mean "algorithm"?)
	// rules[0]: line 5: limit must be an integer, got "ten"
	// rules[1] (per-user): line 11: limit must be >= 0, got -5
}
