package system_test

import (
	"fmt"

	"github.com/sluicekit/sluice/core/internal/system"
)

// A container limited to one and a half CPUs.
func ExampleParseCPUMax() {
	q, _ := system.ParseCPUMax("150000 100000\n")
	none, _ := system.ParseCPUMax("max 100000\n")
	fmt.Println(q, none)
	// Output: 1.5 0
}
