package breaker_test

import (
	"encoding/json"
	"fmt"

	"github.com/sluicekit/sluice/core/breaker"
)

func Example() {
	// States are words in JSON, as in a Guard's snapshot.
	out, _ := json.Marshal(breaker.Stats{State: breaker.HalfOpen, Trips: 1})
	fmt.Println(string(out))
	// Output:
	// {"State":"half-open","Requests":0,"Bad":0,"Trips":1,"RetryAfter":0}
}
