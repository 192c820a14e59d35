package labels_test

import (
	"fmt"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/internal/labels"
)

func ExampleResources() {
	rs := []core.ResourceStats{
		{Resource: "GET /x\xff", Total: core.Totals{Pass: 2}},
		{Resource: "GET /y", Total: core.Totals{Pass: 1}},
		{Resource: "GET /x\xfe", Total: core.Totals{Pass: 3}},
	}
	for _, r := range labels.Resources(rs) {
		fmt.Printf("%+q %d\n", r.Resource, r.Total.Pass)
	}
	// Output:
	// "GET /x\ufffd" 5
	// "GET /y" 1
}
